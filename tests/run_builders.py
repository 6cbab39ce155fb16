"""Test runs built in code, for the tests of saved runs and comparisons."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
