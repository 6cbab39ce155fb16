"""`holodeck test --compare A B`: what changed between two runs, and how it is printed."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from holodeck.testing.comparison import compare_runs
from holodeck.testing.reports.comparison import render_comparison
from holodeck.testing.results import TestRun
from run_builders import case, make_run


def before_and_after() -> tuple[TestRun, TestRun]:
    a = make_run(
        "run-a",
        [
            case("greeting", score=4.5),
            case("refund", score=4.2),
            case("booking", "fail", score=2.0),
            case("tone", "pass", "pass", "pass", score=4.0),
            case("retired", score=4.0),
            case("steady", score=4.0),
        ],
    )
    b = make_run(
        "run-b",
        [
            case("greeting", score=4.5),
            case("refund", "fail", score=2.1),  # regression
            case("booking", score=3.9),  # fix
            case("tone", "pass", "fail", "pass", score=3.6),  # now flaky
            case("steady", score=4.0, bleu=0.75),
            case("brand-new"),
        ],
        minutes=30,
        model="openai/gpt-4o-mini",
    )
    return a, b


def test_compare_finds_regressions_fixes_new_removed_and_score_changes() -> None:
    a, b = before_and_after()
    comparison = compare_runs(a, b)

    assert comparison.has_regressions
    assert [(c.case, c.before, c.after, c.flaky) for c in comparison.regressions] == [
        ("refund", "pass", "fail", False),
        ("tone", "pass", "fail", True),  # one run of three failed
    ]
    assert comparison.regressions[0].problems == [
        "Groundedness: 2.1/5.0 ✗ (threshold 3.5)",
        "tools: missing: lookup",
    ]
    assert [(c.case, c.before, c.after) for c in comparison.fixes] == [("booking", "fail", "pass")]
    assert comparison.new_cases == ["brand-new"]
    assert comparison.removed_cases == ["retired"]
    assert [(r.case, r.before, round(r.after, 3)) for r in comparison.pass_rate_changes] == [
        ("refund", 1.0, 0.0),
        ("booking", 0.0, 1.0),
        ("tone", 1.0, 0.667),
    ]
    changes = {(m.case, m.metric): m for m in comparison.metric_changes}
    assert set(changes) == {
        ("refund", "groundedness"),
        ("booking", "groundedness"),
        ("tone", "groundedness"),
        ("steady", "bleu"),
    }
    refund = changes["refund", "groundedness"]
    assert (refund.before, refund.after, refund.before_status, refund.after_status) == (
        4.2,
        2.1,
        "pass",
        "fail",
    )
    assert refund.delta == pytest.approx(-2.1)
    assert changes["steady", "bleu"].delta == pytest.approx(0.25)
    assert changes["tone", "groundedness"].delta == pytest.approx(-0.4)
    assert comparison.unchanged == 1  # greeting
    assert comparison.notes == ["the model changed: openai/gpt-4o -> openai/gpt-4o-mini"]
    assert (comparison.base.passed, comparison.head.passed) == (5, 4)


def test_a_metric_that_could_not_be_computed_is_a_change_without_a_delta() -> None:
    a = make_run("a", [case("x", score=4.0)])
    b = make_run("b", [case("x", "error", score=None)])
    comparison = compare_runs(a, b)
    [change] = [m for m in comparison.metric_changes if m.metric == "groundedness"]
    assert (change.before, change.after, change.after_status, change.delta) == (
        4.0,
        None,
        "error",
        None,
    )
    assert [(c.before, c.after) for c in comparison.regressions] == [("pass", "error")]


def test_comparing_a_run_with_itself_changes_nothing() -> None:
    a, _ = before_and_after()
    comparison = compare_runs(a, a)
    assert not comparison.has_regressions
    assert comparison.fixes == []
    assert comparison.metric_changes == []
    assert comparison.pass_rate_changes == []
    assert comparison.unchanged == len(a.cases)


def test_render_comparison_prints_regressions_first() -> None:
    a, b = before_and_after()
    out = io.StringIO()
    render_comparison(compare_runs(a, b), Console(file=out, width=120))
    text = out.getvalue()

    assert "\x1b" not in text
    assert text.startswith("Comparing run-a (2025-06-01 09:00+00:00, openai/gpt-4o, 5/6 passed)\n")
    assert "     with run-b (2025-06-01 09:30+00:00, openai/gpt-4o-mini, 4/6 passed)" in text
    order = [
        text.index(h)
        for h in (
            "Regressions (2)",
            "Fixes (1)",
            "Pass rate changes",
            "Metric changes",
            "New cases: brand-new",
        )
    ]
    assert order == sorted(order)
    assert "  refund: PASS -> FAIL\n      Groundedness: 2.1/5.0 ✗ (threshold 3.5)\n" in text
    assert "  tone: PASS -> FAIL (flaky)\n      tools: missing: lookup\n" in text
    assert "  booking: FAIL -> PASS" in text
    assert "  refund: 100% -> 0% (-100 points)" in text
    assert "  tone: 100% -> 67% (-33 points)" in text
    assert "Removed cases: retired" in text
    # metric changes: the biggest drop (relative to the metric's scale) first, with deltas
    table = text.split("Metric changes\n")[1].split("\n\n")[0].splitlines()
    assert [row.split() for row in table] == [
        ["Case", "Metric", "Before", "After", "Change"],
        ["refund", "Groundedness", "4.20", "2.10", "-2.10"],
        ["tone", "Groundedness", "4.00", "3.60", "-0.40"],
        ["steady", "BLEU", "0.50", "0.75", "+0.25"],
        ["booking", "Groundedness", "2.00", "3.90", "+1.90"],
    ]
    assert text.rstrip().endswith("2 regressions, 1 fix, 1 unchanged; pass rate 83% -> 67%")


def test_render_comparison_without_changes_says_so() -> None:
    a, _ = before_and_after()
    out = io.StringIO()
    render_comparison(compare_runs(a, a), Console(file=out, width=120))
    text = out.getvalue()
    assert "Regressions" not in text and "Metric changes" not in text
    assert text.rstrip().endswith("0 regressions, 0 fixes, 6 unchanged; pass rate 83% -> 83%")


def test_an_offline_runs_unjudged_scores_are_not_compared() -> None:
    from holodeck.testing.offline import not_judged

    judged = make_run("run-a", [case("greeting", score=4.5)])
    smoke = make_run("run-b", [case("greeting", score=5.0, bleu=0.1)], model="test")
    for run in smoke.cases[0].runs:
        run.metrics = [not_judged(m) for m in run.metrics]
    smoke = smoke.model_copy(update={"offline": True})

    comparison = compare_runs(judged, smoke)

    assert comparison.metric_changes == []  # the canned answer's scores say nothing
    assert "run B is offline: its answer metrics were not judged and are not compared" in (
        comparison.notes
    )
    assert compare_runs(smoke, judged).metric_changes == []
