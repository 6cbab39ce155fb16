"""Errors of the workspace tools: one line the model (and a person) can act on."""

from __future__ import annotations

from holodeck.errors import ToolError


class WorkspaceError(ToolError):
    """A file, shell, code or terminal call was refused or failed."""
