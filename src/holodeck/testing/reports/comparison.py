"""The console view of a comparison between two runs: regressions first, then fixes,
pass rate and metric changes, new and removed cases, and a one-line verdict.

    render_comparison(compare_runs(before, after), Console())
"""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table
from rich.text import Text

from holodeck.testing.comparison import Comparison, MetricChange, RunInfo
from holodeck.testing.reports._format import metric_label
from holodeck.testing.reports.console import print_text, printable
from holodeck.testing.results import Status


def render_comparison(comparison: Comparison, console: Console) -> None:
    """Print what changed, regressions first, and a one-line verdict."""

    def heading(text: str, style: str = "bold") -> None:
        console.print()
        print_text(console, Text(text, style=style))

    base, head = comparison.base, comparison.head
    print_text(console, Text(f"Comparing {_describe(base)}", style="bold"))
    print_text(console, Text(f"     with {_describe(head)}", style="bold"))
    for note in comparison.notes:
        print_text(console, Text(f"note: {note}", style="yellow"))

    if comparison.regressions:
        heading(f"Regressions ({len(comparison.regressions)})", "bold red")
        for change in comparison.regressions:
            line = Text(f"{change.case}: ", style="bold")
            line.append(f"{change.before.upper()} -> {change.after.upper()}", style="red")
            if change.flaky:
                line.append(" (flaky)", style="magenta")
            print_text(console, line, 2)
            for problem in change.problems:
                print_text(console, Text(problem, style="dim"), 6)
    if comparison.fixes:
        heading(f"Fixes ({len(comparison.fixes)})", "bold green")
        for change in comparison.fixes:
            line = Text(f"{change.case}: ", style="bold")
            line.append(f"{change.before.upper()} -> {change.after.upper()}", style="green")
            print_text(console, line, 2)
    if comparison.pass_rate_changes:
        heading("Pass rate changes")
        for rate in sorted(comparison.pass_rate_changes, key=lambda r: r.delta):
            line = Text(f"{rate.case}: {rate.before:.0%} -> {rate.after:.0%} ")
            line.append(f"({rate.delta * 100:+.0f} points)", style=_delta_style(rate.delta))
            print_text(console, line, 2)
    if comparison.metric_changes:
        heading("Metric changes")
        table = Table(box=None, show_edge=False, padding=(0, 2, 0, 0))
        table.add_column("  Case")
        table.add_column("Metric")
        for column in ("Before", "After", "Change"):
            table.add_column(column, justify="right")
        for metric in sorted(comparison.metric_changes, key=_worst_first):
            delta = metric.delta
            moved = (
                Text("-", style="dim")
                if delta is None
                else Text(f"{delta:+.2f}", style=_delta_style(delta))
            )
            cells = [
                Text(f"  {metric.case}"),
                Text(metric_label(metric.metric)),
                _score_text(metric.before, metric.before_status),
                _score_text(metric.after, metric.after_status),
                moved,
            ]
            table.add_row(*(printable(cell, console) for cell in cells))
        console.print(table)
    if comparison.new_cases or comparison.removed_cases:
        console.print()
    if comparison.new_cases:
        print_text(console, Text(f"New cases: {', '.join(comparison.new_cases)}", style="cyan"))
    if comparison.removed_cases:
        removed = ", ".join(comparison.removed_cases)
        print_text(console, Text(f"Removed cases: {removed}", style="cyan"))

    regressions, fixes = len(comparison.regressions), len(comparison.fixes)
    verdict = Text(
        f"{regressions} regression{'s' if regressions != 1 else ''}",
        style="bold red" if regressions else "bold green",
    )
    verdict.append(f", {fixes} fix{'es' if fixes != 1 else ''}")
    verdict.append(f", {comparison.unchanged} unchanged")
    verdict.append(f"; pass rate {base.pass_rate:.0%} -> {head.pass_rate:.0%}")
    console.print()
    print_text(console, verdict)


def _describe(info: RunInfo) -> str:
    started = info.started_at.isoformat(sep=" ", timespec="minutes")
    return f"{info.run_id} ({started}, {info.model}, {info.passed}/{info.total} passed)"


def _score_text(score: float | None, status: Status | None) -> Text:
    if status is None:
        return Text("absent", style="dim")
    if score is None:
        return Text("ERROR" if status == "error" else "-", style="yellow")
    return Text(f"{score:.2f}", style="green" if status == "pass" else "red")


def _delta_style(delta: float | None) -> str:
    if delta is None or math.isclose(delta, 0.0, abs_tol=1e-9):
        return "dim"
    return "green" if delta > 0 else "red"


def _worst_first(change: MetricChange) -> tuple[int, float]:
    delta = change.delta
    if delta is None:
        return (1, 0.0)
    return (0, delta / (change.scale_max or 1.0))
