"""A parsed YAML document: plain values plus the line and column of every field path."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from holodeck.spec.diagnostics import Diagnostic, FieldPath


class Position(NamedTuple):
    """Where a field starts (a tuple: tens of thousands are made for big files)."""

    line: int  # 1-based
    column: int  # 1-based


@dataclass
class YamlDocument:
    """Parsed YAML: `data` holds plain values, `positions` the place of each path."""

    data: Any
    file: Path | None
    positions: dict[FieldPath, Position] = field(default_factory=dict)

    def position(self, path: FieldPath) -> Position | None:
        """The position of `path`, or of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            pos = self.positions.get(tuple(path[:end]))
            if pos is not None:
                return pos
        return None

    def diagnostic(self, path: FieldPath, message: str, **kwargs: Any) -> Diagnostic:
        pos = self.position(path)
        return Diagnostic(
            message,
            file=self.file,
            line=pos.line if pos else None,
            column=pos.column if pos else None,
            path=path,
            **kwargs,
        )
