"""One run from several: the shards of a suite (`holodeck test --shard I/N` on several
machines), or any runs of one agent, combined by `holodeck test merge`.

The merged run holds every case once, in the definition's order when the runs are the
shards of one split (shard I holds cases I, I+N, ...: interleaving them restores it),
else run after run; its summary is counted again from the cases, its duration is the
longest run's (shards run side by side); `merged_from` names the runs and `shard` is None.

Refused unless `force`: runs of different agents or prompt versions, shards of different
splits, the same shard twice, and a case in more than one run (with force the
latest-started run's result of such a case is kept). Missing shards of a split are a
warning: the merged run lacks their cases.

    merged, warnings = merge_runs([first, second])
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from holodeck.errors import InputError
from holodeck.testing.results import CaseResult, RunSummary, TestRun
from holodeck.testing.shards import Shard, interleave


class MergeError(InputError):
    """The runs cannot be merged (different agents, overlapping shards...) without --force."""


def merge_runs(runs: Sequence[TestRun], *, force: bool = False) -> tuple[TestRun, list[str]]:
    """The merged run and the warnings to show; raises `MergeError` for runs that do not
    belong together, unless `force` (then those problems are warnings too)."""
    if not runs:
        raise MergeError("no runs to merge", hint="name run ids, run files or a directory")
    problems = _mismatches(runs)
    warnings = _missing_shards(runs)
    if problems and not force:
        raise MergeError(
            "cannot merge these runs: " + "; ".join(problems),
            hint="merge the runs of one suite's split; --force merges them anyway",
        )
    warnings = problems + warnings
    ordered = sorted(runs, key=lambda r: r.started_at)
    first = ordered[0]
    cases = _cases(runs)
    summary = RunSummary.of(cases, max(r.summary.duration_ms for r in runs))
    merged = TestRun(
        run_id=datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6],
        agent=first.agent,
        source=first.source,
        model=_one(r.model for r in ordered),
        prompt_version=first.prompt_version,
        prompt_tags=first.prompt_tags,
        started_at=first.started_at,
        concurrency=max(r.concurrency for r in runs),
        repeat=max(r.repeat for r in runs),
        interrupted=any(r.interrupted for r in runs),
        offline=any(r.offline for r in runs),
        tags=list(dict.fromkeys(t for r in ordered for t in r.tags)),
        models={k: v for r in reversed(ordered) for k, v in r.models.items()},
        settings=first.settings,
        git=first.git,
        shard=None,
        merged_from=[r.run_id for r in ordered],
        cases=cases,
        summary=summary,
    )
    if any(r.git != first.git for r in runs):
        warnings.append(
            "the runs were made at different commits or with different changes: "
            + ", ".join(f"{r.run_id} {_git_label(r)}" for r in ordered)
        )
    return merged, warnings


def _mismatches(runs: Sequence[TestRun]) -> list[str]:
    problems = []
    for field, label in (("agent", "agents"), ("prompt_version", "prompt versions")):
        values: dict[str, list[str]] = {}
        for run in runs:
            values.setdefault(str(getattr(run, field) or "(none)"), []).append(run.run_id)
        if len(values) > 1:
            listed = ", ".join(f"{v} ({', '.join(ids)})" for v, ids in values.items())
            problems.append(f"different {label}: {listed}")
    splits = {shard.count for shard in _shards(runs)}
    if len(splits) > 1:
        listed = ", ".join(f"{r.shard} ({r.run_id})" for r in runs if r.shard)
        problems.append(f"shards of different splits: {listed}")
    seen: dict[str, str] = {}
    for run in runs:
        if run.shard is None:
            continue
        if run.shard in seen:
            problems.append(
                f"shard {run.shard} is given twice: runs {seen[run.shard]} and {run.run_id}"
            )
        seen.setdefault(run.shard, run.run_id)
    owners: dict[str, str] = {}
    twice: list[str] = []
    for run in runs:
        for case in run.cases:
            if case.name in owners and owners[case.name] != run.run_id:
                twice.append(f"{case.name!r} ({owners[case.name]}, {run.run_id})")
            owners.setdefault(case.name, run.run_id)
    if twice:
        more = f" and {len(twice) - 5} more" if len(twice) > 5 else ""
        problems.append(f"cases in more than one run: {', '.join(twice[:5])}{more}")
    return problems


def _missing_shards(runs: Sequence[TestRun]) -> list[str]:
    shards = _shards(runs)
    warnings = []
    for count in sorted({s.count for s in shards}):
        have = {s.index for s in shards if s.count == count}
        missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in have]
        if missing:
            warnings.append(
                f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                f"{'are' if len(missing) > 1 else 'is'} missing: the merged run lacks "
                f"{'their' if len(missing) > 1 else 'its'} cases"
            )
    return warnings


def _cases(runs: Sequence[TestRun]) -> list[CaseResult]:
    """Every case once: in the definition's order for the shards of one split, else run
    after run (by start); a case in several runs keeps the latest-started run's result."""
    shards = _shards(runs)
    if len(shards) == len(runs) and len({s.count for s in shards}) == 1:  # one split
        by_index = sorted(zip(shards, runs, strict=True), key=lambda p: (p[0], p[1].started_at))
        whole = interleave([run.cases for _, run in by_index])
    else:
        whole = [c for r in sorted(runs, key=lambda r: r.started_at) for c in r.cases]
    latest: dict[str, CaseResult] = {}
    for run in sorted(runs, key=lambda r: r.started_at):
        for case in run.cases:
            latest[case.name] = case
    kept, placed = [], set()
    for case in whole:
        if case.name not in placed:
            placed.add(case.name)
            kept.append(latest[case.name])
    return kept


def _shards(runs: Sequence[TestRun]) -> list[Shard]:
    return [Shard.parse(r.shard) for r in runs if r.shard]


def _one(values: Iterable[str]) -> str:
    """The one value the runs share, else each of them, joined."""
    return ", ".join(dict.fromkeys(values))


def _git_label(run: TestRun) -> str:
    if run.git is None:
        return "(no git)"
    return run.git.commit[:12] + (" dirty" if run.git.dirty else "")
