"""A progress bar for search tools' ingestion on a terminal (stderr): `holodeck ingest`,
and the start of `test` and `chat`, when sources are read and embedded. With stderr
redirected, `holodeck ingest` writes plain progress lines there instead (a tenth of the
way at a time), so a log shows how far it got."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.tools import HierarchicalDocumentTool, VectorstoreTool

# Small sources finish before a bar is worth drawing.
SHOWN_FROM = 200
LINES_PER_PHASE = 10  # plain progress lines: one each tenth of the way, and the last


class IngestBar:
    """`Hosting.progress`: draws only inside `shown()` (reports outside it, say from a
    tool's first use while cases run under their own bar, are dropped)."""

    def __init__(self, *, always: bool = False) -> None:
        self._always = always
        self._bar: Any = None
        self._tasks: dict[tuple[str, str], Any] = {}
        self._plain = False  # inside `shown()` with stderr not a terminal (ingest only)
        self._said: dict[tuple[str, str], int] = {}  # the last count each phase wrote

    def __call__(self, tool: str, phase: str, done: int, total: int) -> None:
        if self._plain:
            self._line(tool, phase, done, total)
            return
        if self._bar is None or (total < SHOWN_FROM and not self._always):
            return
        key = (tool, phase)
        if key not in self._tasks:
            self._tasks[key] = self._bar.add_task(f"{tool}: {phase}", total=total)
        self._bar.update(self._tasks[key], completed=done, total=total)

    def _line(self, tool: str, phase: str, done: int, total: int) -> None:
        key = (tool, phase)
        last = self._said.get(key)
        step = max(total // LINES_PER_PHASE, 1)
        if last is not None and done != total and done - last < step:
            return
        if last == done:
            return
        self._said[key] = done
        print(f"{tool}: {phase} {done}/{total}", file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def shown(self) -> Iterator[None]:
        if not sys.stderr.isatty():
            self._plain = self._always
            try:
                yield
            finally:
                self._plain, self._said = False, {}
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        try:
            with self._bar:
                yield
        finally:
            self._bar, self._tasks = None, {}


def has_search_tools(spec: AgentSpec) -> bool:
    return any(isinstance(t, VectorstoreTool | HierarchicalDocumentTool) for t in spec.tools)
