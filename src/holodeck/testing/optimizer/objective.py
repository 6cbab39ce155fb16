"""A candidate's score on a set of cases: its pass rate, a metric's mean, or the weighted
mean of several metrics (`loss`). Metric scores count as a share of their scale (0..1)."""

from __future__ import annotations

from collections.abc import Collection

from holodeck.errors import ConfigurationError
from holodeck.spec.models.optimizer import OptimizerSettings
from holodeck.testing.results import CaseResult, CaseRun, MetricResult, TestRun

PASS_RATE = "pass_rate"


def score(run: TestRun, names: Collection[str], settings: OptimizerSettings) -> float | None:
    """The objective over the cases `names` (None: none of them ran)."""
    cases = [c for c in run.cases if c.name in names]
    if not cases:
        return None
    if settings.loss:
        total = sum(settings.loss.values())
        return sum(w * metric_mean(cases, m) for m, w in settings.loss.items()) / total
    if settings.objective == PASS_RATE:
        return sum(c.pass_rate for c in cases) / len(cases)
    return metric_mean(cases, settings.objective)


def metric_mean(cases: list[CaseResult], name: str) -> float:
    """The mean share of its scale `name` scored over every run of `cases`; a run where
    the metric has no score (it failed, or the case errored) counts 0."""
    shares = []
    for case in cases:
        for run in case.runs:
            found = [m for m in _metrics(run) if m.name == name]
            shares.append(
                sum(_share(m) for m in found) / len(found) if found else 0.0,
            )
    return sum(shares) / len(shares) if shares else 0.0


def check_objective(run: TestRun, settings: OptimizerSettings, where: str) -> None:
    """Refuse an objective naming a metric no case reported (a typo would score 0 forever)."""
    wanted = list(settings.loss) if settings.loss else [settings.objective]
    reported = {m.name for c in run.cases for r in c.runs for m in _metrics(r)}
    for name in wanted:
        if name != PASS_RATE and name not in reported:
            known = ", ".join(sorted(reported)) or "none"
            field = "loss" if settings.loss else "objective"
            raise ConfigurationError(
                f"{where}: optimizer.{field}: no case reported a metric `{name}`",
                hint=f"use `pass_rate` or a metric the cases report ({known})",
            )


def _metrics(run: CaseRun) -> list[MetricResult]:
    return [*run.metrics, *(m for t in run.turns for m in t.metrics)]


def _share(metric: MetricResult) -> float:
    if metric.score is None:
        return 0.0
    return metric.score / (metric.scale_max or 1.0)
