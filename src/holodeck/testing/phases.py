"""Where a `holodeck test` run spends its time (`--timings`): importing the runtime,
loading the definition, ingesting search tools' sources, running the cases, saving the
run and writing the reports."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

PHASES = ("import", "load", "ingest", "run", "save", "report")


class Phases:
    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - started

    def line(self) -> str:
        shown = [n for n in PHASES if n != "ingest" or self.seconds[n]]  # only when it ran
        parts = " · ".join(f"{name} {self.seconds[name]:.2f} s" for name in shown)
        return f"timings: {parts}"
