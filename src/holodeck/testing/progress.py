"""Progress while cases run: a live bar with pass/fail counts and the time left on a
terminal; above it (or alone, without a terminal) one line for each case that fails or
errors, with the first reason it did not pass, or for every case with `verbose`. Details
come in the report at the end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from holodeck.testing.reports.failure_reasons import case_reasons
from holodeck.testing.results import CaseResult


@contextmanager
def live_progress(
    console: Console, total: int, *, verbose: bool = False
) -> Iterator[Callable[[CaseResult], None]]:
    """Yields the callback the runner calls as each case finishes."""
    counts = {"pass": 0, "fail": 0, "error": 0}

    def worth_a_line(case: CaseResult) -> bool:
        return verbose or case.status != "pass"

    if not console.is_terminal:

        def report_line(case: CaseResult) -> None:
            counts[case.status] += 1
            if worth_a_line(case):
                console.print(_one_line(case))

        yield report_line
        return
    progress = Progress(
        TextColumn("[bold]testing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "[green]{task.fields[passed]} passed[/] [red]{task.fields[failed]} failed[/]"
            " [yellow]{task.fields[errors]} errors[/]"
        ),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    task = progress.add_task("cases", total=total, passed=0, failed=0, errors=0)

    def advance(case: CaseResult) -> None:
        counts[case.status] += 1
        if worth_a_line(case):
            progress.console.print(_one_line(case))
        progress.update(
            task, advance=1, passed=counts["pass"], failed=counts["fail"], errors=counts["error"]
        )

    with progress:
        yield advance


def _one_line(case: CaseResult) -> Text:
    style = {"pass": "green", "fail": "red", "error": "yellow"}[case.status]
    text = Text(case.status.upper(), style=style)
    text.append(f" {case.name}")  # as written: a name is never read as markup
    if len(case.runs) > 1:
        text.append(f" ({case.pass_rate:.0%} of {len(case.runs)} runs)")
    why = case_reasons(case)
    if why:
        more = f" (+{len(why) - 1} more)" if len(why) > 1 else ""
        text.append(f": {why[0]}{more}", style="dim")
    return text
