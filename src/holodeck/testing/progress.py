"""A live progress bar with pass/fail counts while cases run; plain lines without a TTY."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from holodeck.testing.results import CaseResult


@contextmanager
def live_progress(console: Console, total: int) -> Iterator[Callable[[CaseResult], None]]:
    """Yields the callback the runner calls as each case finishes: one line per case,
    under a progress bar when the output is a terminal. Details come at the end."""
    counts = {"pass": 0, "fail": 0, "error": 0}
    if not console.is_terminal:

        def report_line(case: CaseResult) -> None:
            counts[case.status] += 1
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
        console=console,
        transient=True,
    )
    task = progress.add_task("cases", total=total, passed=0, failed=0, errors=0)

    def advance(case: CaseResult) -> None:
        counts[case.status] += 1
        progress.console.print(_one_line(case))
        progress.update(
            task, advance=1, passed=counts["pass"], failed=counts["fail"], errors=counts["error"]
        )

    with progress:
        yield advance


def _one_line(case: CaseResult) -> str:
    mark = {"pass": "[green]PASS[/]", "fail": "[red]FAIL[/]", "error": "[yellow]ERROR[/]"}
    rate = f" ({case.pass_rate:.0%} of {len(case.runs)} runs)" if len(case.runs) > 1 else ""
    return f"{mark[case.status]} {case.name}{rate}"
