"""Score one answer with a test case's metrics.

`evaluate(metrics, sample, judges)` runs every enabled metric on `sample`, the independent
ones concurrently, and returns one `MetricResult` each, in the order given. A metric that
cannot be computed (no ground truth, a judge that timed out or was rate limited, a code
metric that raised) is an `error` result with the reason; it never stops the run, and it
fails the case only with `fail_on_error: true`. With a `threshold` a metric passes when
`score >= threshold`; without one it is informational (always `pass`).

Modules: `nlp` (computed metrics), `judge` (judge models, prompts, the standard AI
metrics), `rag`, `geval`, `code`, `conversation` (whole conversations).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from holodeck.spec.models.evaluations import (
    AI_METRICS,
    CodeMetric,
    ConversationMetric,
    GEvalMetric,
    Metric,
    RagMetric,
    StandardMetric,
)
from holodeck.testing.metrics.code import evaluate_code
from holodeck.testing.metrics.code_graders import evaluate_grader
from holodeck.testing.metrics.conversation import evaluate_conversation
from holodeck.testing.metrics.geval import evaluate_geval
from holodeck.testing.metrics.judge import JudgeFactory, evaluate_ai
from holodeck.testing.metrics.nlp import evaluate_nlp
from holodeck.testing.metrics.rag import evaluate_rag
from holodeck.testing.metrics.response_path import project
from holodeck.testing.metrics.sample import Kind, MetricError, Outcome, Sample
from holodeck.testing.results import MetricResult

__all__ = ["JudgeFactory", "Sample", "evaluate", "evaluate_one"]


async def evaluate(
    metrics: Sequence[Metric], sample: Sample, judges: JudgeFactory
) -> list[MetricResult]:
    """The results of the enabled `metrics` on `sample`, in order; disabled ones are left out."""
    enabled = [m for m in metrics if m.enabled]
    return list(await asyncio.gather(*(evaluate_one(m, sample, judges) for m in enabled)))


async def evaluate_one(metric: Metric, sample: Sample, judges: JudgeFactory) -> MetricResult:
    if isinstance(metric, StandardMetric):
        if metric.response_path is not None:
            try:
                sample = project(sample, metric.response_path)
            except MetricError as exc:
                kind: Kind = "ai" if metric.metric in AI_METRICS else "nlp"
                outcome = Outcome(metric.metric, kind, metric.threshold, metric.fail_on_error)
                return outcome.error(str(exc))
        if metric.metric in AI_METRICS:
            return await evaluate_ai(metric, sample, judges)

        return evaluate_nlp(metric, sample)
    if isinstance(metric, GEvalMetric):
        return await evaluate_geval(metric, sample, judges)
    if isinstance(metric, ConversationMetric):
        return await evaluate_conversation(metric, sample, judges)
    if isinstance(metric, RagMetric):
        return await evaluate_rag(metric, sample, judges)
    if isinstance(metric, CodeMetric) and metric.grader is not None:
        return await evaluate_grader(metric, sample, judges.root)
    if isinstance(metric, CodeMetric):
        return await evaluate_code(metric, sample, judges.root)
    raise TypeError(f"not a metric: {metric!r}")
