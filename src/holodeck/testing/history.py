"""Saved runs and `holodeck test --compare A B`.

Every run is saved as `<directory>/<run_id>.json` (the runner uses `.holodeck/runs`).
`load_run` finds one again by id, unique id prefix, path, `latest` or `previous`;
`compare_runs` tells what changed between two runs, regressions first."""

from __future__ import annotations

import json
import math
import os
import re
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError
from rich.console import Console
from rich.table import Table
from rich.text import Text

from holodeck.atomic_write import write_atomically
from holodeck.errors import ConfigurationError
from holodeck.testing.results import CaseResult, Status, TestRun

_SAFE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
ALIASES = ("latest", "previous")


class RunLookupError(ConfigurationError, ValueError):
    """A run reference matched no saved run, several, or an unreadable file."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "run not found"


# --- saving and loading -------------------------------------------------------------------


def save_run(run: TestRun, directory: Path) -> Path:
    """Write `run` to `<directory>/<run_id>.json` (atomically) and return the path."""
    if not _SAFE_ID.match(run.run_id):
        raise ValueError(
            f"run id {run.run_id!r} cannot name a file: use letters, digits, '.', '_' and '-'"
        )
    path = directory / f"{run.run_id}.json"
    write_atomically(path, (run.model_dump_json(indent=2) + "\n").encode())
    return path


def saved_runs(directory: Path) -> list[tuple[datetime, Path]]:
    """Readable saved runs, oldest first (by start time, then file name)."""
    found = []
    for path in directory.glob("*.json") if directory.is_dir() else ():
        try:
            started = datetime.fromisoformat(json.loads(path.read_text("utf-8"))["started_at"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a run (or a damaged one): it can be neither latest nor previous
        found.append((started, path))
    return sorted(found, key=lambda item: (item[0].timestamp(), item[1].name))


def load_run(ref: str, directory: Path) -> TestRun:
    """The run `ref` names: a path to a run file, `latest`, `previous`, a run id saved in
    `directory`, or a prefix of exactly one such id."""
    candidate = Path(ref)
    if "/" in ref or os.sep in ref or candidate.suffix == ".json":
        if not candidate.is_file():
            raise RunLookupError(f"no run file at {ref}")
        return _read(candidate)
    if ref in ALIASES:
        wanted = 1 if ref == "latest" else 2
        found: list[TestRun] = []
        for _, path in reversed(saved_runs(directory)):
            try:
                found.append(_read(path))
            except RunLookupError:
                continue  # a damaged file is not a run
            if len(found) == wanted:
                return found[-1]
        have = f"{len(found)} saved run{'s' if len(found) != 1 else ''}"
        raise RunLookupError(
            f"'{ref}' needs at least {wanted} saved run{'s' if wanted > 1 else ''} "
            f"in {directory}; there {'is' if len(found) == 1 else 'are'} {have}"
        )
    exact = directory / f"{ref}.json"
    if exact.is_file():
        return _read(exact)
    matches = sorted(p for p in directory.glob("*.json") if p.stem.startswith(ref)) if ref else []
    if len(matches) == 1:
        return _read(matches[0])
    if matches:
        listed = ", ".join(p.stem for p in matches[:10])
        raise RunLookupError(f"run id prefix {ref!r} is ambiguous: it matches {listed}")
    if candidate.is_file():  # a run file in the working directory, named without .json
        return _read(candidate)
    recent = [p.stem for _, p in saved_runs(directory)[-5:]][::-1]
    hint = (
        f"recent runs: {', '.join(recent)}; or use latest / previous"
        if recent
        else f"no runs are saved in {directory} yet"
    )
    raise RunLookupError(f"no saved run matches {ref!r} ({hint})")


def _read(path: Path) -> TestRun:
    try:
        return TestRun.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise RunLookupError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise RunLookupError(f"{path} is not a saved test run ({where}: {first['msg']})") from exc


# --- comparing ----------------------------------------------------------------------------


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
    from holodeck.testing.reports._format import run_problems, shown_run

    before, after = _by_name(a), _by_name(b)
    comparison = Comparison(base=_info(a), head=_info(b))
    if a.agent != b.agent:
        comparison.notes.append(f"the runs test different agents ({a.agent} and {b.agent})")
    if a.model != b.model:
        comparison.notes.append(f"the model changed: {a.model} -> {b.model}")
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
    changes = []
    for name in [*after, *(n for n in before if n not in after)]:
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


# --- printing -----------------------------------------------------------------------------


def render_comparison(comparison: Comparison, console: Console) -> None:
    """Print what changed, regressions first, and a one-line verdict."""
    from holodeck.testing.reports._format import metric_label
    from holodeck.testing.reports.console import print_text, printable

    def heading(text: str, style: str = "bold") -> None:
        console.print()
        print_text(console, Text(text, style=style))

    base, head = comparison.base, comparison.head
    print_text(console, Text(f"Comparing {_describe(base)}", style="bold"))
    print_text(console, Text(f"     with {_describe(head)}", style="bold"))
    for note in comparison.notes:
        print_text(console, Text(f"note: {note}", style="yellow"))

    if comparison.regressions:
        heading(f"Regressions ({len(comparison.regressions)})", "bold red")
        for change in comparison.regressions:
            line = Text(f"{change.case}: ", style="bold")
            line.append(f"{change.before.upper()} -> {change.after.upper()}", style="red")
            if change.flaky:
                line.append(" (flaky)", style="magenta")
            print_text(console, line, 2)
            for problem in change.problems:
                print_text(console, Text(problem, style="dim"), 6)
    if comparison.fixes:
        heading(f"Fixes ({len(comparison.fixes)})", "bold green")
        for change in comparison.fixes:
            line = Text(f"{change.case}: ", style="bold")
            line.append(f"{change.before.upper()} -> {change.after.upper()}", style="green")
            print_text(console, line, 2)
    if comparison.pass_rate_changes:
        heading("Pass rate changes")
        for rate in sorted(comparison.pass_rate_changes, key=lambda r: r.delta):
            line = Text(f"{rate.case}: {rate.before:.0%} -> {rate.after:.0%} ")
            line.append(f"({rate.delta * 100:+.0f} points)", style=_delta_style(rate.delta))
            print_text(console, line, 2)
    if comparison.metric_changes:
        heading("Metric changes")
        table = Table(box=None, show_edge=False, padding=(0, 2, 0, 0))
        table.add_column("  Case")
        table.add_column("Metric")
        for column in ("Before", "After", "Change"):
            table.add_column(column, justify="right")
        for metric in sorted(comparison.metric_changes, key=_worst_first):
            delta = metric.delta
            moved = (
                Text("-", style="dim")
                if delta is None
                else Text(f"{delta:+.2f}", style=_delta_style(delta))
            )
            cells = [
                Text(f"  {metric.case}"),
                Text(metric_label(metric.metric)),
                _score_text(metric.before, metric.before_status),
                _score_text(metric.after, metric.after_status),
                moved,
            ]
            table.add_row(*(printable(cell, console) for cell in cells))
        console.print(table)
    if comparison.new_cases or comparison.removed_cases:
        console.print()
    if comparison.new_cases:
        print_text(console, Text(f"New cases: {', '.join(comparison.new_cases)}", style="cyan"))
    if comparison.removed_cases:
        removed = ", ".join(comparison.removed_cases)
        print_text(console, Text(f"Removed cases: {removed}", style="cyan"))

    regressions, fixes = len(comparison.regressions), len(comparison.fixes)
    verdict = Text(
        f"{regressions} regression{'s' if regressions != 1 else ''}",
        style="bold red" if regressions else "bold green",
    )
    verdict.append(f", {fixes} fix{'es' if fixes != 1 else ''}")
    verdict.append(f", {comparison.unchanged} unchanged")
    verdict.append(f"; pass rate {base.pass_rate:.0%} -> {head.pass_rate:.0%}")
    console.print()
    print_text(console, verdict)


def _describe(info: RunInfo) -> str:
    started = info.started_at.isoformat(sep=" ", timespec="minutes")
    return f"{info.run_id} ({started}, {info.model}, {info.passed}/{info.total} passed)"


def _score_text(score: float | None, status: Status | None) -> Text:
    if status is None:
        return Text("absent", style="dim")
    if score is None:
        return Text("ERROR" if status == "error" else "-", style="yellow")
    return Text(f"{score:.2f}", style="green" if status == "pass" else "red")


def _delta_style(delta: float | None) -> str:
    if delta is None or math.isclose(delta, 0.0, abs_tol=1e-9):
        return "dim"
    return "green" if delta > 0 else "red"


def _worst_first(change: MetricChange) -> tuple[int, float]:
    delta = change.delta
    if delta is None:
        return (1, 0.0)
    return (0, delta / (change.scale_max or 1.0))
