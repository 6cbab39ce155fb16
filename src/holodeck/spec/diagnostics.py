"""Diagnostics: what is wrong, where, and how to fix it.

Loaders never raise at the first problem: they collect `Diagnostic` records and
raise one `SpecError` holding all of them, so a user fixes everything in one pass.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from holodeck.errors import DefinitionError

FieldPath = tuple[str | int, ...]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Diagnostic:
    """One problem in a definition, located by file, line and field path."""

    message: str
    file: Path | None = None
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based
    path: FieldPath = ()
    hint: str | None = None
    severity: Severity = Severity.ERROR
    # set when `file` is an image archive: the member inside it (`config.yaml`)
    member: str | None = None

    @property
    def location(self) -> str:
        where = display_path(self.file) if self.file else "<input>"
        if self.member is not None:
            where += f"!/{self.member}"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return where

    @property
    def field(self) -> str:
        return format_path(self.path)

    def render(self) -> str:
        """One line per diagnostic: `file:line:col: error: field: message (hint)`."""
        text = f"{self.location}: {self.severity.value}: "
        if self.path:
            text += f"{self.field}: "
        text += self.message
        if self.hint:
            text += f" ({self.hint})"
        return text


def display_path(file: Path) -> str:
    """Paths under the working directory are shown relative to it, others as they are."""
    if file.is_absolute():
        try:
            return str(file.relative_to(Path.cwd()))
        except (ValueError, OSError):
            return str(file)
    return str(file)


def in_reading_order(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Grouped by file (in the order files were first reported), then by line."""
    diagnostics = list(diagnostics)
    order: dict[tuple[str, str | None], int] = {}
    for d in diagnostics:
        order.setdefault((str(d.file), d.member), len(order))
    return sorted(
        diagnostics, key=lambda d: (order[(str(d.file), d.member)], d.line or 0, d.column or 0)
    )


def format_path(path: FieldPath) -> str:
    """`("tools", 0, "file")` -> `tools[0].file`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """A fix hint naming the closest known word, or None when nothing is close."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean `{matches[0]}`?" if matches else None


class SpecError(DefinitionError):
    """A definition could not be loaded; `diagnostics` lists every problem found.

    Each diagnostic carries its own location and hint, so `render()` prints one
    `file:line:column: error: field: message (hint)` line per problem."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = in_reading_order(diagnostics)
        super().__init__(self.render())

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    def render(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)


@dataclass
class Collector:
    """Accumulates diagnostics while a definition is loaded."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics.extend(diagnostics)

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def warnings(self) -> list[Diagnostic]:
        # a sub-agent called by two tools passes its warnings up twice: said once
        warnings = dict.fromkeys(d for d in self.diagnostics if d.severity is Severity.WARNING)
        return in_reading_order(warnings)

    def raise_if_errors(self) -> None:
        if self.has_errors:
            raise SpecError(self.diagnostics)
