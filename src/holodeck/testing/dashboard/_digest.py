"""A saved run's summary: what the dashboard's first page shows of it (counts, pass rate,
cost, metric averages, the fields runs are filtered by), without its cases.

It is read from the run's file with models of only the fields it needs (`_Head`), about
three times faster than a whole `TestRun` (measured by bench/dashboard.py): the first
view of a thousand saved runs reads every one. A file damaged in a part the summary does
not read is listed, and says it is damaged when its cases are asked for."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from holodeck.testing.results import RunSummary


class MetricAverage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mean: float  # over every scored result of the metric in the run (cases, runs, turns)
    scale_max: float = 1.0
    judged: bool = True  # False when any result was the offline model's (not a real score)


class RunDigest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    agent: str
    model: str
    models: dict[str, str] = {}
    prompt_version: str | None = None
    tags: list[str] = []
    started_at: datetime
    offline: bool = False
    interrupted: bool = False
    shard: str | None = None
    total: int
    passed: int
    failed: int
    errors: int
    flaky: int = 0
    duration_ms: float = 0.0
    cost_usd: float | None = None  # what its cases' model requests cost; None: unpriced
    metrics: dict[str, MetricAverage] = {}


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")  # the rest of a result is not read


class _Score(_Lenient):  # a MetricResult
    name: str
    score: float | None = None
    scale_max: float = 1.0
    judged: bool = True


class _Turn(_Lenient):
    metrics: list[_Score] = []


class _Attempt(_Lenient):  # a CaseRun
    metrics: list[_Score] = []
    turns: list[_Turn] = []


class _Case(_Lenient):
    runs: list[_Attempt]


class _Head(_Lenient):  # a TestRun: the fields a digest shows
    agent: str
    model: str
    models: dict[str, str] = {}
    prompt_version: str | None = None
    tags: list[str] = []
    started_at: datetime
    offline: bool = False
    interrupted: bool = False
    shard: str | None = None
    cases: list[_Case]
    summary: RunSummary


def read_digest(run_id: str, data: bytes) -> RunDigest:
    """The digest of the run saved as `data` (raises pydantic's ValidationError)."""
    run = _Head.model_validate_json(data)
    scores: dict[str, list[float]] = {}
    scales: dict[str, float] = {}
    unjudged: set[str] = set()
    for case in run.cases:
        for attempt in case.runs:
            results = [*attempt.metrics, *(m for turn in attempt.turns for m in turn.metrics)]
            for metric in results:
                if metric.score is None:
                    continue
                scores.setdefault(metric.name, []).append(metric.score)
                scales[metric.name] = metric.scale_max
                if not metric.judged:
                    unjudged.add(metric.name)
    summary = run.summary
    return RunDigest(
        run_id=run_id,
        agent=run.agent,
        model=run.model,
        models=run.models,
        prompt_version=run.prompt_version,
        tags=run.tags,
        started_at=run.started_at,
        offline=run.offline,
        interrupted=run.interrupted,
        shard=run.shard,
        total=summary.total,
        passed=summary.passed,
        failed=summary.failed,
        errors=summary.errors,
        flaky=summary.flaky,
        duration_ms=summary.duration_ms,
        cost_usd=None if summary.cost_usd is None else float(summary.cost_usd),
        metrics={
            name: MetricAverage(
                mean=sum(values) / len(values),
                scale_max=scales[name],
                judged=name not in unjudged,
            )
            for name, values in scores.items()
        },
    )
