"""What changed between two test runs (`holodeck test --compare A B`): regressions,
fixes, new and removed cases, pass rates and metric scores; and, for several runs (the
runs dashboard), every case across them, each run compared with the one before it.

    comparison = compare_runs(load_run("previous", runs), load_run("latest", runs))
    if comparison.has_regressions: ...
    series = compare_series([first, second, third])  # oldest first
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from holodeck.testing.reports._format import run_problems, shown_run
from holodeck.testing.results import CaseResult, Status, TestRun


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunInfo(_Model):
    run_id: str
    agent: str
    model: str
    started_at: datetime
    passed: int
    total: int

    @property
    def pass_rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


class StatusChange(_Model):
    """A case that went from passing to not passing (a regression) or back (a fix)."""

    case: str
    before: Status
    after: Status
    problems: list[str] = []  # why it does not pass now (regressions only)
    flaky: bool = False  # its runs disagree now


class PassRateChange(_Model):
    case: str
    before: float
    after: float

    @property
    def delta(self) -> float:
        return self.after - self.before


class MetricChange(_Model):
    """A metric's score (the mean over a case's runs) or status that changed."""

    case: str
    metric: str
    before: float | None
    after: float | None
    before_status: Status | None
    after_status: Status | None
    scale_max: float = 1.0

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


class Comparison(_Model):
    base: RunInfo  # A, the earlier run
    head: RunInfo  # B, the run being judged
    regressions: list[StatusChange] = []
    fixes: list[StatusChange] = []
    new_cases: list[str] = []
    removed_cases: list[str] = []
    pass_rate_changes: list[PassRateChange] = []
    metric_changes: list[MetricChange] = []
    unchanged: int = 0  # cases in both with the same status, pass rate and scores
    notes: list[str] = []

    @property
    def has_regressions(self) -> bool:
        return bool(self.regressions)


def compare_runs(a: TestRun, b: TestRun) -> Comparison:
    """What changed from run `a` to run `b`."""
    before, after = _by_name(a), _by_name(b)
    comparison = Comparison(base=_info(a), head=_info(b))
    if a.agent != b.agent:
        comparison.notes.append(f"the runs test different agents ({a.agent} and {b.agent})")
    if a.model != b.model:
        comparison.notes.append(f"the model changed: {a.model} -> {b.model}")
    if a.prompt_version and b.prompt_version and a.prompt_version != b.prompt_version:
        comparison.notes.append(
            f"the prompt changed: version {a.prompt_version} -> {b.prompt_version}"
        )
    for label, run in (("A", a), ("B", b)):
        if run.offline:
            comparison.notes.append(
                f"run {label} is offline: its answer metrics were not judged and are not compared"
            )
    comparison.new_cases = [name for name in after if name not in before]
    comparison.removed_cases = [name for name in before if name not in after]
    for name, new in after.items():
        old = before.get(name)
        if old is None:
            continue
        changed = False
        if old.status == "pass" and new.status != "pass":
            shown = shown_run(new)
            problems = run_problems(shown) if shown else []
            comparison.regressions.append(
                StatusChange(
                    case=name,
                    before=old.status,
                    after=new.status,
                    problems=problems,
                    flaky=new.flaky,
                )
            )
            changed = True
        elif old.status != "pass" and new.status == "pass":
            comparison.fixes.append(StatusChange(case=name, before=old.status, after=new.status))
            changed = True
        elif old.status != new.status:
            changed = True
        if not math.isclose(old.pass_rate, new.pass_rate, abs_tol=1e-9):
            comparison.pass_rate_changes.append(
                PassRateChange(case=name, before=old.pass_rate, after=new.pass_rate)
            )
            changed = True
        metric_changes = _metric_changes(name, old, new)
        comparison.metric_changes += metric_changes
        if not changed and not metric_changes:
            comparison.unchanged += 1
    return comparison


Verdict = Literal["regression", "improvement", "new", "removed", "unchanged"]
# the order the dashboard lists cases in: what got worse first
VERDICTS: tuple[Verdict, ...] = ("regression", "improvement", "new", "removed", "unchanged")


class CaseAcross(_Model):
    """One case in each of several runs; None where a run does not have it."""

    case: str
    verdict: Verdict
    statuses: list[Status | None]
    pass_rates: list[float | None]
    scores: dict[str, list[float | None]] = {}  # metric -> mean score over the case's runs
    problems: list[str] = []  # why it does not pass in the last run that has it


class Series(_Model):
    runs: list[RunInfo]  # oldest first
    steps: list[Comparison]  # each run compared with the one before it
    cases: list[CaseAcross]  # regressions, improvements, new, removed, then unchanged


def compare_series(runs: Sequence[TestRun]) -> Series:
    """Every case across `runs` (at least two, in the order given: oldest first). Each run
    is compared with the one before it by `compare_runs`; a case is a regression when it
    got worse in any of those steps (its status stopped passing, its pass rate fell or a
    judged score dropped or stopped passing), even if a later run recovered; else an
    improvement when it got better in one; else new (not in the first run), removed (not
    in the last) or unchanged. For two runs the steps are exactly `compare_runs(a, b)`."""
    if len(runs) < 2:
        raise ValueError("a comparison needs at least two runs")
    steps = [compare_runs(a, b) for a, b in itertools.pairwise(runs)]
    cases = [_by_name(run) for run in runs]
    names = list(dict.fromkeys(name for by_name in cases for name in by_name))
    worse: set[str] = set()
    better: set[str] = set()
    for step in steps:
        worse.update(change.case for change in step.regressions)
        better.update(change.case for change in step.fixes)
        for rate in step.pass_rate_changes:
            (worse if rate.delta < 0 else better).add(rate.case)
        for metric in step.metric_changes:
            if _got_worse(metric):
                worse.add(metric.case)
            elif _got_better(metric):
                better.add(metric.case)
    rows = []
    for name in names:
        present = [by_name.get(name) for by_name in cases]
        verdict: Verdict = (
            "regression"
            if name in worse
            else "improvement"
            if name in better
            else "new"
            if present[0] is None
            else "removed"
            if present[-1] is None
            else "unchanged"
        )
        scores: dict[str, list[float | None]] = {}
        for index, case in enumerate(present):
            for metric_name, (mean, _, _) in (_metric_view(case) if case else {}).items():
                scores.setdefault(metric_name, [None] * len(runs))[index] = mean
        last = next(case for case in reversed(present) if case is not None)
        shown = shown_run(last) if last.status != "pass" else None
        rows.append(
            CaseAcross(
                case=name,
                verdict=verdict,
                statuses=[case.status if case else None for case in present],
                pass_rates=[case.pass_rate if case else None for case in present],
                scores=scores,
                problems=run_problems(shown) if shown else [],
            )
        )
    rows.sort(key=lambda row: VERDICTS.index(row.verdict))  # stable: run order kept within
    return Series(runs=[_info(run) for run in runs], steps=steps, cases=rows)


def _got_worse(change: MetricChange) -> bool:
    delta = change.delta
    if delta is not None and delta < 0:
        return True
    return change.before_status == "pass" and change.after_status in ("fail", "error")


def _got_better(change: MetricChange) -> bool:
    delta = change.delta
    if delta is not None and delta > 0:
        return True
    return change.before_status in ("fail", "error") and change.after_status == "pass"


def _info(run: TestRun) -> RunInfo:
    return RunInfo(
        run_id=run.run_id,
        agent=run.agent,
        model=run.model,
        started_at=run.started_at,
        passed=run.summary.passed,
        total=run.summary.total,
    )


def _by_name(run: TestRun) -> dict[str, CaseResult]:
    cases: dict[str, CaseResult] = {}
    for case in run.cases:
        name, count = case.name, 1
        while name in cases:  # duplicate names are compared by position
            count += 1
            name = f"{case.name} #{count}"
        cases[name] = case
    return cases


def _metric_view(case: CaseResult) -> dict[str, tuple[float | None, Status, float]]:
    """metric -> (mean score over runs, overall status, scale) for one case."""
    scores: dict[str, list[float]] = {}
    statuses: dict[str, set[str]] = {}
    scales: dict[str, float] = {}
    for run in case.runs:
        for metric in run.metrics:
            scores.setdefault(metric.name, [])
            if metric.score is not None:
                scores[metric.name].append(metric.score)
            statuses.setdefault(metric.name, set()).add(metric.status)
            scales[metric.name] = metric.scale_max
    view: dict[str, tuple[float | None, Status, float]] = {}
    for name, values in scores.items():
        seen = statuses[name]
        status: Status = "fail" if "fail" in seen else "error" if "error" in seen else "pass"
        mean = sum(values) / len(values) if values else None
        view[name] = (mean, status, scales[name])
    return view


def _metric_changes(case: str, old: CaseResult, new: CaseResult) -> list[MetricChange]:
    before, after = _metric_view(old), _metric_view(new)
    # a canned answer's or the offline judge's score says nothing: no change to report
    unjudged = {m.name for c in (old, new) for r in c.runs for m in r.metrics if not m.judged}
    changes = []
    for name in [*after, *(n for n in before if n not in after)]:
        if name in unjudged:
            continue
        b_score, b_status, b_scale = before.get(name, (None, None, None))
        a_score, a_status, a_scale = after.get(name, (None, None, None))
        same_score = (b_score is None and a_score is None) or (
            b_score is not None
            and a_score is not None
            and math.isclose(b_score, a_score, abs_tol=1e-9)
        )
        if same_score and b_status == a_status:
            continue
        changes.append(
            MetricChange(
                case=case,
                metric=name,
                before=b_score,
                after=a_score,
                before_status=b_status,
                after_status=a_status,
                scale_max=a_scale or b_scale or 1.0,
            )
        )
    return changes
