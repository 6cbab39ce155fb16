"""Middleware a red-team scan adds to the agent it attacks: see `seeding.py`."""

from holodeck.testing.redteam.seeding import after_tool

__all__ = ["after_tool"]
