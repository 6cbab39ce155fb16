"""Errors raised while turning tool definitions into callable tools."""

from __future__ import annotations

from pathlib import Path

from holodeck.errors import DefinitionError


class ToolLoadError(DefinitionError):
    """A tool cannot be prepared; the message says which, where and how to fix it."""

    def __init__(self, message: str, file: Path | None = None) -> None:
        self.file = file
        super().__init__(f"{file}: {message}" if file else message)
