"""The garbage collector during a `holodeck test` run.

Start-up (importing pydantic-ai and the provider SDK, loading the definition, building
the agent) makes objects by the hundred thousand and frees almost none: the collector
would walk the growing heap again and again to find nothing, about a fifth of a start's
CPU. So the command pauses it while it starts. Once the agent is built, `settle` freezes
what start-up made (it lives as long as the run: no later collection walks it again) and
collects among the cases' objects, less often than Python's default: a young collection
every 700 allocations walks the objects of the ten cases in flight over and over, for
cycles that are rare (bench/test_scale.py shows both in its start-up and run-phase CPU).

Collection is process-wide: `resume` gives it back as it was, at the end of the command
or when a start ends early (an error, `--compare`), so that a caller running the command
in its own process keeps its own settings."""

from __future__ import annotations

import gc

# allocations between young collections during the cases (Python's default: 700)
RUN_THRESHOLD = 10_000

_before: tuple[bool, tuple[int, int, int]] | None = None  # (enabled, thresholds) at pause


def pause_for_start_up() -> None:
    global _before
    if _before is None:
        _before = (gc.isenabled(), gc.get_threshold())
    gc.disable()


def settle() -> None:
    """Start-up is over: what it made is kept out of every later collection, and
    collection runs again (if it ran before the pause), every RUN_THRESHOLD allocations."""
    gc.freeze()
    if _before is None or not _before[0]:
        return
    _, (first, *older) = _before
    gc.set_threshold(first and max(first, RUN_THRESHOLD), *older)  # 0: kept off
    gc.enable()


def resume() -> None:
    """Collection as it was before `pause_for_start_up`."""
    global _before
    if _before is None:
        return
    enabled, thresholds = _before
    _before = None
    gc.set_threshold(*thresholds)
    if enabled:
        gc.enable()
