"""Progress while `holodeck test` runs: only the cases that fail or error get a line
(every case with -v), under a bar with the time left on a terminal."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from holodeck.testing.progress import live_progress
from run_builders import case


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
