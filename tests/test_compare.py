"""Saved runs (`.holodeck/runs/<run_id>.json`) and `holodeck test --compare A B`."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console

from holodeck.testing.history import (
    RunLookupError,
    compare_runs,
    load_run,
    render_comparison,
    save_run,
    saved_runs,
)
from holodeck.testing.results import (
    CaseResult,
    CaseRun,
    MetricResult,
    RunSummary,
    TestRun,
    ToolCheck,
    TurnRecord,
)

START = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)


def case(name: str, *statuses: str, score: float | None = 4.0, bleu: float = 0.5) -> CaseResult:
    """A case whose runs ended with `statuses`, scored `score` (groundedness) and `bleu`."""
    runs = []
    for attempt, status in enumerate(statuses or ("pass",), start=1):
        grounded = MetricResult(
            name="groundedness",
            kind="ai",
            score=score,
            threshold=3.5,
            scale_max=5.0,
            status="error" if score is None else "pass" if score >= 3.5 else "fail",
            error="judge timed out" if score is None else None,
            reason=None if score is None else f"scored {score}",
        )
        runs.append(
            CaseRun(
                attempt=attempt,
                status=status,
                turns=[TurnRecord(input=f"{name}?", output="ok", input_tokens=10, output_tokens=5)],
                tool_check=ToolCheck(
                    passed=status == "pass", missing=[] if status == "pass" else ["lookup"]
                ),
                metrics=[
                    grounded,
                    MetricResult(name="bleu", kind="nlp", score=bleu, threshold=0.3, status="pass"),
                ],
                duration_ms=100.0,
            )
        )
    passed = sum(r.status == "pass" for r in runs)
    overall = "pass" if passed == len(runs) else ("error" if "error" in statuses else "fail")
    return CaseResult(
        name=name,
        input=f"{name}?",
        runs=runs,
        status=overall,
        pass_rate=passed / len(runs),
        flaky=0 < passed < len(runs),
    )


def make_run(
    run_id: str, cases: list[CaseResult], *, minutes: int = 0, model: str = "openai/gpt-4o"
) -> TestRun:
    return TestRun(
        run_id=run_id,
        agent="support",
        source="agent.yaml",
        model=model,
        started_at=START + timedelta(minutes=minutes),
        concurrency=2,
        repeat=max(len(c.runs) for c in cases) if cases else 1,
        cases=cases,
        summary=RunSummary(
            total=len(cases),
            passed=sum(c.status == "pass" for c in cases),
            failed=sum(c.status == "fail" for c in cases),
            errors=sum(c.status == "error" for c in cases),
            flaky=sum(c.flaky for c in cases),
        ),
    )


# --- saving and loading -------------------------------------------------------------------


def test_save_run_writes_run_id_json_that_loads_back(tmp_path: Path) -> None:
    runs = tmp_path / ".holodeck" / "runs"
    run = make_run("20250601-0900-abc123", [case("greeting"), case("refund", "fail", score=2.0)])
    path = save_run(run, runs)
    assert path == runs / "20250601-0900-abc123.json"
    assert json.loads(path.read_text("utf-8"))["run_id"] == "20250601-0900-abc123"
    assert [p.name for p in runs.iterdir()] == [path.name]  # no partial file left behind
    assert load_run("20250601-0900-abc123", runs) == run


def test_save_run_refuses_a_run_id_that_is_not_a_file_name(tmp_path: Path) -> None:
    for bad in ("../escape", "a/b", ".hidden", ""):
        with pytest.raises(ValueError, match="cannot name a file"):
            save_run(make_run(bad, [case("x")]), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_load_run_by_prefix_path_latest_and_previous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    # file names sort the other way round from start times: order comes from started_at
    first = make_run("zz-first", [case("a")], minutes=0)
    second = make_run("mm-second", [case("a", "fail", score=1.0)], minutes=5)
    third = make_run("aa-third", [case("a")], minutes=10)
    for run in (first, second, third):
        save_run(run, runs)

    assert load_run("latest", runs).run_id == "aa-third"
    assert load_run("previous", runs).run_id == "mm-second"
    assert load_run("zz", runs).run_id == "zz-first"
    assert load_run(str(runs / "mm-second.json"), runs).run_id == "mm-second"
    assert [p.stem for _, p in saved_runs(runs)] == ["zz-first", "mm-second", "aa-third"]

    # a path relative to the working directory
    monkeypatch.chdir(runs)
    assert load_run("zz-first.json", tmp_path / "elsewhere").run_id == "zz-first"


def test_load_run_errors_say_what_exists(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    assert issubclass(RunLookupError, ValueError)  # what `holodeck test --compare` reports
    with pytest.raises(
        RunLookupError, match=r"needs at least 1 saved run in .*there are 0 saved runs"
    ):
        load_run("latest", runs)
    with pytest.raises(RunLookupError, match="no runs are saved in"):
        load_run("abc", runs)

    save_run(make_run("run-1", [case("a")]), runs)
    with pytest.raises(
        RunLookupError, match=r"'previous' needs at least 2 saved runs.*there is 1 saved run"
    ):
        load_run("previous", runs)
    save_run(make_run("run-2", [case("a")], minutes=1), runs)
    with pytest.raises(RunLookupError, match="prefix 'run-' is ambiguous: it matches run-1, run-2"):
        load_run("run-", runs)
    with pytest.raises(
        RunLookupError,
        match=r"no saved run matches 'nope' \(recent runs: run-2, run-1; or use latest / previous\)",
    ):
        load_run("nope", runs)
    with pytest.raises(RunLookupError, match="no run file at"):
        load_run(str(tmp_path / "missing.json"), runs)


def test_a_damaged_run_file_is_named_and_skipped_by_latest(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    save_run(make_run("good", [case("a")]), runs)
    (runs / "broken.json").write_text(
        '{"run_id": "broken", "started_at": "2030-01-01T00:00:00"}', "utf-8"
    )
    (runs / "garbage.json").write_text("not json at all", "utf-8")
    assert load_run("latest", runs).run_id == "good"
    with pytest.raises(
        RunLookupError, match=r"broken.json is not a saved test run \(agent: Field required\)"
    ):
        load_run("broken", runs)
    with pytest.raises(RunLookupError, match=r"garbage\.json is not a saved test run"):
        load_run("garbage", runs)


# --- comparing ----------------------------------------------------------------------------


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
