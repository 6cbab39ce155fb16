"""Errors of the sandbox: it cannot start here, or a command could not be run in it."""

from __future__ import annotations

from holodeck.errors import ConfigurationError, ToolError


class SandboxUnavailable(ConfigurationError):
    """bubblewrap is missing or cannot start on this machine (exit 2: the machine's set-up,
    not the agent, is at fault). Commands are never run unsandboxed instead."""


class SandboxError(ToolError):
    """A command could not be started in the sandbox."""
