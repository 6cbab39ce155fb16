"""One suite run on several models (`holodeck test PATH --model A --model B`): the runs
of each model combined into one `TestRun`, and the side-by-side view every report shows.

Each case appears once per model, named `<case> [<model>]`, so a matrix run is saved,
viewed and compared like any other run; `TestRun.matrix` lists the models.

    run = combine([("openai/gpt-4o-mini", run_a), ("anthropic/claude-haiku-4-5", run_b)])
    for stats in model_stats(run): ...
    for row in case_rows(run): ...  # the cases the models disagree on first
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from holodeck.testing.results import CaseResult, RunSummary, TestRun, total_cost


def combine(runs: Sequence[tuple[str, TestRun]], duration_ms: float) -> TestRun:
    """The runs of one suite on each model as one run (the first run's facts, every
    model's cases); `duration_ms` is the wall time of them all, side by side."""
    first = runs[0][1]
    cases = [
        case.model_copy(update={"name": f"{case.name} [{model}]", "model": model})
        for model, run in runs
        for case in run.cases
    ]
    return first.model_copy(
        update={
            "model": ", ".join(model for model, _ in runs),
            "matrix": [model for model, _ in runs],
            "interrupted": any(run.interrupted for _, run in runs),
            "offline": all(run.offline for _, run in runs),
            "concurrency": sum(run.concurrency for _, run in runs),
            "cases": cases,
            "summary": RunSummary.of(cases, duration_ms),
        }
    )


def case_name(case: CaseResult) -> str:
    """The suite's name of a case (without the ` [model]` a matrix run adds)."""
    suffix = f" [{case.model}]"
    return case.name[: -len(suffix)] if case.model and case.name.endswith(suffix) else case.name


@dataclass(frozen=True)
class ModelStats:
    """One model's numbers over the suite."""

    model: str
    cases: int
    passed: int
    failed: int
    errors: int
    metrics: dict[str, float]  # metric -> mean score over the runs that have one
    latency_ms: float  # mean duration of a case's run
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal | None  # None: the model has no price

    @property
    def pass_rate(self) -> float:
        return self.passed / self.cases if self.cases else 0.0


def model_stats(run: TestRun) -> list[ModelStats]:
    """Each model's numbers, in the order the models were given."""
    found = []
    for model in run.matrix:
        cases = [c for c in run.cases if c.model == model]
        runs = [r for c in cases for r in c.runs]
        scores: dict[str, list[float]] = {}
        for each in runs:
            for metric in each.metrics:
                if metric.score is not None:
                    scores.setdefault(metric.name, []).append(metric.score)
        found.append(
            ModelStats(
                model=model,
                cases=len(cases),
                passed=sum(c.status == "pass" for c in cases),
                failed=sum(c.status == "fail" for c in cases),
                errors=sum(c.status == "error" for c in cases),
                metrics={name: sum(s) / len(s) for name, s in sorted(scores.items())},
                latency_ms=sum(r.duration_ms for r in runs) / len(runs) if runs else 0.0,
                input_tokens=sum(r.input_tokens for r in runs),
                output_tokens=sum(r.output_tokens for r in runs),
                cost_usd=total_cost(r.cost_usd for r in runs),
            )
        )
    return found


@dataclass(frozen=True)
class CaseRow:
    """One case of the suite: its result on each model (None: it did not run there)."""

    name: str
    results: dict[str, CaseResult | None]  # model -> result

    @property
    def disagree(self) -> bool:
        """Whether the models' verdicts differ (a case one model passed and another not)."""
        statuses = {r.status if r is not None else None for r in self.results.values()}
        return len(statuses) > 1


def case_rows(run: TestRun) -> list[CaseRow]:
    """Every case with each model's result: those the models disagree on first, then
    the rest, each group in the suite's order."""
    by_name: dict[str, dict[str, CaseResult]] = {}
    for case in run.cases:
        if case.model is not None:
            by_name.setdefault(case_name(case), {})[case.model] = case
    rows = [
        CaseRow(name, {model: found.get(model) for model in run.matrix})
        for name, found in by_name.items()
    ]
    return [r for r in rows if r.disagree] + [r for r in rows if not r.disagree]
