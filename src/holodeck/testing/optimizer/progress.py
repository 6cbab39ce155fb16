"""Where a search's events go: one JSON object per line (`--progress ndjson`, for tools),
or a live line on a terminal with a line per candidate above it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from rich.console import Console
from rich.markup import escape
from rich.status import Status

Emit = Callable[[dict[str, Any]], None]


def ndjson(stream: IO[str]) -> Emit:
    def emit(event: dict[str, Any]) -> None:
        stream.write(json.dumps(event, default=str) + "\n")
        stream.flush()

    return emit


@contextmanager
def live(console: Console) -> Iterator[Emit]:
    """Events shown to a person on `console` (stderr): a status line while a candidate
    runs, a line for each result."""
    status: Status | None = Status("optimizing", console=console) if console.is_terminal else None
    if status is not None:
        status.start()
    try:
        yield lambda event: _show(console, status, event)
    finally:
        if status is not None:
            status.stop()


def _show(console: Console, status: Status | None, event: dict[str, Any]) -> None:
    kind = event["event"]
    line = None
    if kind == "start":
        line = (
            f"optimizing {event['agent']}: search {event['search_id']}, "
            f"{len(event['train'])} train / {len(event['holdout'])} holdout cases"
        )
    elif kind == "candidate_started" and status is not None:
        status.update(f"candidate {event['candidate']} ({event['phase']}): {_settings(event)}")
    elif kind == "candidate_finished":
        scores = event["scores"]
        held = "-" if scores["holdout"] is None else f"{scores['holdout']:.3f}"
        line = (
            f"candidate {event['candidate']} ({event['phase']}) {_settings(event)}: "
            f"train {scores['train']:.3f} holdout {held} "
            f"({event['passed']}/{event['total']} passed, {event['calls']} calls so far)"
        )
    elif kind == "proposal":
        said = _short(event["reason"] or event["instructions"])
        line = f"[cyan]proposal[/] from {event['model']}: {escape(said)}"
    elif kind in ("accepted", "rejected"):
        color = "green" if kind == "accepted" else "yellow"
        which = "proposal" if event["candidate"] is None else f"candidate {event['candidate']}"
        line = f"  [{color}]{kind}[/] {which}: {event['reason']}"
    elif kind == "proposer_failed":
        line = f"[red]the proposer failed[/]: {escape(event['reason'])}"
    elif kind == "budget_reached":
        line = f"[yellow]budget reached[/]: {event['budget']} ({event['detail']})"
    elif kind == "warning":
        line = f"[yellow]warning[/]: {event['message']}"
    if line is not None:
        console.print(line, highlight=False)


def _settings(event: dict[str, Any]) -> str:
    shown = ", ".join(f"{k}={v}" for k, v in event["settings"].items())
    return shown or "original settings"


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 100 else flat[:97] + "..."
