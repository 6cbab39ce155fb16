"""Where a `holodeck test` run spends its time (`--timings`): importing the runtime,
loading the definition, ingesting search tools' sources, running the cases, saving the
run and writing the reports; wall time and the process's CPU time for each."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

PHASES = ("import", "load", "ingest", "run", "save", "report")


class Phases:
    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.cpu_seconds = dict.fromkeys(PHASES, 0.0)  # every thread of the process

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        started, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - started
            self.cpu_seconds[name] += time.process_time() - cpu

    def line(self) -> str:
        """`timings: import 1.10 s (1.08 s CPU) · load ...`"""
        shown = [n for n in PHASES if n != "ingest" or self.seconds[n]]  # only when it ran
        parts = " · ".join(
            f"{name} {_seconds(self.seconds[name])} s ({_seconds(self.cpu_seconds[name])} s CPU)"
            for name in shown
        )
        return f"timings: {parts}"


def _seconds(value: float) -> str:
    """Two decimals, or milliseconds for a phase shorter than a tenth of a second (a small
    definition loads in a few ms, which two decimals would print as 0.00)."""
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"
