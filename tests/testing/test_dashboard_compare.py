"""Several runs compared (the dashboard's Compare view): `compare_series` classifies each
case from the two-run comparisons of consecutive runs, and lists regressions first."""

from __future__ import annotations

import pytest

from holodeck.testing.comparison import compare_runs, compare_series
from run_builders import case, make_run


def test_two_runs_are_exactly_the_two_run_comparison() -> None:
    a = make_run("a", [case("refund"), case("greeting")])
    b = make_run("b", [case("refund", "fail", score=2.0), case("greeting")], minutes=5)
    series = compare_series([a, b])
    assert series.steps == [compare_runs(a, b)]
    assert [(c.case, c.verdict) for c in series.cases] == [
        ("refund", "regression"),
        ("greeting", "unchanged"),
    ]
    assert series.cases[0].statuses == ["pass", "fail"]
    assert series.cases[0].problems == series.steps[0].regressions[0].problems
    assert series.cases[0].scores["groundedness"] == [4.0, 2.0]


def test_across_three_runs_a_dip_anywhere_is_a_regression_and_order_is_worst_first() -> None:
    first = make_run(
        "r1",
        [
            case("dipped"),
            case("fixed", "fail", score=2.0),
            case("steady"),
            case("retired"),
            case("scored", bleu=0.8),
        ],
    )
    second = make_run(
        "r2",
        [
            case("dipped", "fail", score=2.0),
            case("fixed"),
            case("steady"),
            case("retired"),
            case("added"),
            case("scored", bleu=0.8),
        ],
        minutes=5,
    )
    third = make_run(
        "r3",
        [case("dipped"), case("fixed"), case("steady"), case("added"), case("scored", bleu=0.6)],
        minutes=10,
    )
    series = compare_series([first, second, third])
    assert len(series.steps) == 2
    assert series.steps[1] == compare_runs(second, third)
    verdicts = [(c.case, c.verdict) for c in series.cases]
    assert verdicts == [
        ("dipped", "regression"),  # it passes again, but it broke in between
        ("scored", "regression"),  # same status, a judged score fell
        ("fixed", "improvement"),
        ("added", "new"),
        ("retired", "removed"),
        ("steady", "unchanged"),
    ]
    retired = next(c for c in series.cases if c.case == "retired")
    assert retired.statuses == ["pass", "pass", None]
    assert next(c for c in series.cases if c.case == "scored").scores["bleu"] == pytest.approx(
        [0.8, 0.8, 0.6]
    )


def test_one_run_is_not_a_comparison() -> None:
    with pytest.raises(ValueError, match="at least two runs"):
        compare_series([make_run("only", [case("a")])])
