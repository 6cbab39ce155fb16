"""Errors of the builtin tools' calls."""

from __future__ import annotations

from holodeck.errors import ToolError


class BuiltinToolError(ToolError):
    """A builtin tool's call failed; the message is one line a user can act on."""


class WebFetchError(BuiltinToolError):
    pass


class WebSearchError(BuiltinToolError):
    pass
