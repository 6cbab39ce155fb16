"""A progress bar for search tools' ingestion, shown on a terminal while sources are
read and embedded (`holodeck ingest`, and the first run of `test`, `chat`, `deploy`)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

# Small sources finish before a bar is worth drawing.
SHOWN_FROM = 200


@contextlib.contextmanager
def ingest_progress(*, always: bool = False) -> Iterator[Any]:
    """Yields the `RunOptions.progress` callback: a rich bar per tool and phase on a
    terminal (stderr), nothing elsewhere."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    tasks: dict[tuple[str, str], Any] = {}

    def report(tool: str, phase: str, done: int, total: int) -> None:
        if total < SHOWN_FROM and not always:
            return
        key = (tool, phase)
        if key not in tasks:
            tasks[key] = bar.add_task(f"{tool}: {phase}", total=total)
        bar.update(tasks[key], completed=done, total=total)

    with bar:
        yield report
