"""What a saved run says about what was tested, beyond its cases: the definition (secrets
hidden), the models by role, the git commit, the prompt version and the run's `--tag`s.
Runs are told apart by these later (`--compare`, `test merge`, CI artifacts).

    details = describe(spec, agent.options, tags=("nightly",))  # before the cases run
    run = details.apply(await run_tests(spec, options, agent))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from holodeck.spec.models.evaluations import (
    AI_METRICS,
    ConversationMetric,
    GEvalMetric,
    RagMetric,
    StandardMetric,
)
from holodeck.spec.models.prompt_version import PromptVersion
from holodeck.testing.git_state import git_state
from holodeck.testing.offline import OFFLINE
from holodeck.testing.results import GitState, TestRun
from holodeck.testing.settings_snapshot import settings_snapshot

if TYPE_CHECKING:
    from holodeck.runtime import RunOptions
    from holodeck.spec.models.agent_spec import AgentSpec
    from holodeck.spec.models.evaluations import Metric
    from holodeck.spec.models.model_settings import ModelSettings


@dataclass(frozen=True)
class RunDetails:
    """Taken as the run starts (the commit and definition that were tested), applied to
    the run once it ends (`apply`)."""

    spec: AgentSpec
    options: RunOptions
    tags: tuple[str, ...]
    settings: dict[str, Any]
    git: GitState | None

    def apply(self, run: TestRun) -> TestRun:
        """`run` with its settings, models, git state, prompt version and tags."""
        version = prompt_version(self.spec)
        return run.model_copy(
            update={
                "tags": list(self.tags),
                "models": models_used(self.spec, self.options, run.model, offline=run.offline),
                "settings": self.settings,
                "git": self.git,
                "prompt_version": run.prompt_version or (version.version if version else None),
            }
        )


def describe(spec: AgentSpec, options: RunOptions, tags: Sequence[str] = ()) -> RunDetails:
    """What a run of `spec` with `options` will record: read now, before the cases run."""
    return RunDetails(
        spec=spec,
        options=options,
        tags=tuple(dict.fromkeys(tags)),
        settings=settings_snapshot(spec, options.env),
        git=git_state(spec.root),
    )


def prompt_version(spec: AgentSpec) -> PromptVersion | None:
    """The instructions' version: agent.yaml's front matter or digest; for an image (whose
    loader gives none), the digest of its instructions."""
    if spec.prompt_version is not None:
        return spec.prompt_version
    return PromptVersion.of(spec.instructions) if spec.instructions else None


def models_used(
    spec: AgentSpec, options: RunOptions, agent: str, *, offline: bool
) -> dict[str, str]:
    """Role -> provider/name: `agent`, then `judge` (the judge most metrics share),
    `judge:<metric>` for each judged metric whose model differs from it, and `user` when a
    case has a simulated user."""
    models = {"agent": agent}
    evaluations = spec.evaluations
    if any(case.simulate is not None for case in spec.test_cases):
        user = (evaluations.user_model or evaluations.model) if evaluations else None
        models["user"] = _run_label(user or spec.model, options, agent, offline=offline)
    judged = list(_judged(spec))
    if not judged:
        return models
    if offline or options.model is not None:
        models["judge"] = _run_label(None, options, agent, offline=offline)
        return models
    default = evaluations.model if evaluations and evaluations.model else spec.model
    shared = label(default)
    for name, metric in judged:
        own = label(metric.model) if metric.model is not None else shared
        if own == shared:
            models["judge"] = shared
        else:
            models[f"judge:{name}"] = own
    return models


def _run_label(own: ModelSettings | None, options: RunOptions, agent: str, *, offline: bool) -> str:
    """What a model block becomes in this run: the offline model, the `--model` override
    (a model object given by code plays every part, like the agent), or the block."""
    if offline:
        return OFFLINE
    if isinstance(options.model, str):
        return options.model
    if options.model is not None:
        return agent
    return label(own)


def label(settings: ModelSettings | None) -> str:
    """`provider/name` of a model block (`(none)` without one)."""
    if settings is None:
        return "(none)"
    if settings.name:
        return f"{settings.provider}/{settings.name}"
    return settings.provider


def _judged(spec: AgentSpec) -> Iterable[tuple[str, Metric]]:
    """The metrics a model judges (AI, G-Eval, RAG), the agent's and every case's and
    turn's (not only a shard's: every shard of a suite names the same models), once each."""
    metrics: list[Metric] = list(spec.evaluations.metrics) if spec.evaluations else []
    for case in spec.test_cases:
        metrics.extend(case.evaluations or ())
        for turn in case.turns or ():
            metrics.extend(turn.evaluations or ())
    seen: set[str] = set()
    for metric in metrics:
        name = judged_name(metric)
        if name is not None and name not in seen:
            seen.add(name)
            yield name, metric


def judged_name(metric: Metric) -> str | None:
    """The name of a metric a model judges (AI, G-Eval, RAG, conversation); None for one
    computed without a model (NLP, code)."""
    if isinstance(metric, StandardMetric) and metric.metric in AI_METRICS:
        return metric.metric
    if isinstance(metric, GEvalMetric):
        return metric.name
    if isinstance(metric, RagMetric):
        return str(metric.metric_type)  # a Literal built from a tuple: Any to mypy
    if isinstance(metric, ConversationMetric):
        return str(metric.metric)
    return None
