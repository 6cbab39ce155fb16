"""G-Eval style metrics: a criterion in the user's words, judged by a model.

The judge scores 0-10 (the result is divided by 10, so `threshold` is 0-1); with
`strict_mode` it gives 1 only when the criterion is fully met, else 0. Without
`evaluation_steps` the judge writes its own steps from the criterion first, in the same
call (they are appended to the recorded judge prompt). `evaluation_params` chooses what
the judge sees; `context` and `retrieval_context` both mean the retrieval context (the
test case's `retrieval_context`, else what the tools returned).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck.testing.metrics.judge import (
    JudgeFactory,
    JudgeRequest,
    Scale,
    instructions,
    judge,
    missing,
    render,
)
from holodeck.testing.metrics.sample import Outcome, Sample
from holodeck.testing.results import MetricResult

if TYPE_CHECKING:
    from holodeck.spec.models.evaluations import GEvalMetric

GEVAL_SCALE = Scale(0, 10)
STRICT_SCALE = Scale(0, 1, whole=True)
PARAM_PARTS = {
    "input": "input",
    "actual_output": "output",
    "expected_output": "expected",
    "context": "context",
    "retrieval_context": "context",
}


async def evaluate_geval(metric: GEvalMetric, sample: Sample, judges: JudgeFactory) -> MetricResult:
    outcome = Outcome(metric.name, "geval", metric.threshold, metric.fail_on_error)
    parts = tuple(dict.fromkeys(PARAM_PARTS[p] for p in metric.evaluation_params))
    problem = missing(parts, sample, metric.name)
    if problem:
        return outcome.error(problem)
    scale = STRICT_SCALE if metric.strict_mode else GEVAL_SCALE
    task = f"Judge the material against this criterion:\n\n{metric.criteria.strip()}"
    if metric.evaluation_steps:
        listed = "\n".join(f"{n}. {s}" for n, s in enumerate(metric.evaluation_steps, start=1))
        steps = f"Follow these evaluation steps:\n{listed}"
    else:
        steps = (
            "First write 3 to 5 concise evaluation steps for judging this criterion "
            "(`evaluation_steps`), then follow them."
        )
    if metric.strict_mode:
        rubric = "Score 1 only when the criterion is fully met; otherwise 0."
    else:
        rubric = "Score 10 when the criterion is fully met, 0 when it is not met at all."
    return await judge(
        JudgeRequest(
            outcome,
            metric.model,
            instructions(f"{task}\n\n{steps}", parts, scale, rubric),
            render(sample, parts),
            scale,
            with_steps=not metric.evaluation_steps,
            normalise=None if metric.strict_mode else (lambda raw: raw / GEVAL_SCALE.high),
        ),
        judges,
    )
