"""Progress while `holodeck test` runs: only the cases that fail or error get a line
(every case with -v), under a bar with the time left on a terminal; and the report of a
big run lists what needs attention and counts the rest."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from holodeck.testing.progress import live_progress
from holodeck.testing.reports import render_console
from holodeck.testing.results import TestRun
from run_builders import case, make_run


def run_cases(terminal: bool, verbose: bool) -> str:
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=100, color_system=None)
    cases = [case(f"ok-{i}", "pass") for i in range(50)] + [case("broken", "fail")]
    with live_progress(console, len(cases), verbose=verbose) as on_case:
        for finished in cases:
            on_case(finished)
    return out.getvalue()


@pytest.mark.parametrize("terminal", [True, False])
def test_only_failing_cases_get_a_line(terminal: bool) -> None:
    shown = run_cases(terminal, verbose=False)
    assert "FAIL broken" in shown
    assert "PASS ok-" not in shown


@pytest.mark.parametrize("terminal", [True, False])
def test_verbose_lists_every_case(terminal: bool) -> None:
    shown = run_cases(terminal, verbose=True)
    assert "FAIL broken" in shown
    assert all(f"PASS ok-{i}\n" in shown for i in range(50))


def test_the_bar_says_how_long_is_left() -> None:
    shown = run_cases(terminal=True, verbose=False)
    assert "left" in shown and "51/51" in shown


def big_run(passing: int) -> TestRun:
    cases = [case("broken", "fail"), *(case(f"ok-{i}", "pass") for i in range(passing))]
    return make_run("big", cases)


def test_a_big_run_lists_what_needs_attention_and_counts_the_rest() -> None:
    out = io.StringIO()
    render_console(big_run(200), Console(file=out, width=120), verbose=False)
    shown = out.getvalue()
    assert "FAIL  broken" in shown
    assert "ok-7" not in shown
    assert "200 passing cases not listed (-v lists every case)" in shown
    assert "1 passed" not in shown and "200 passed" in shown  # the totals count them all


def test_a_big_run_lists_every_case_with_verbose_and_a_small_one_always() -> None:
    for run, verbose in ((big_run(200), True), (big_run(10), False)):
        out = io.StringIO()
        render_console(run, Console(file=out, width=120), verbose=verbose)
        assert "ok-7" in out.getvalue() and "not listed" not in out.getvalue()
