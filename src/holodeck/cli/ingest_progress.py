"""A progress bar for search tools' ingestion on a terminal (stderr): `holodeck ingest`,
and the start of `test` and `chat`, when sources are read and embedded."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.tools import HierarchicalDocumentTool, VectorstoreTool

# Small sources finish before a bar is worth drawing.
SHOWN_FROM = 200


class IngestBar:
    """`Hosting.progress`: draws only inside `shown()` (reports outside it, say from a
    tool's first use while cases run under their own bar, are dropped)."""

    def __init__(self, *, always: bool = False) -> None:
        self._always = always
        self._bar: Any = None
        self._tasks: dict[tuple[str, str], Any] = {}

    def __call__(self, tool: str, phase: str, done: int, total: int) -> None:
        if self._bar is None or (total < SHOWN_FROM and not self._always):
            return
        key = (tool, phase)
        if key not in self._tasks:
            self._tasks[key] = self._bar.add_task(f"{tool}: {phase}", total=total)
        self._bar.update(self._tasks[key], completed=done, total=total)

    @contextlib.contextmanager
    def shown(self) -> Iterator[None]:
        if not sys.stderr.isatty():
            yield
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
