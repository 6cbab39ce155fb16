"""Retrieval (RAG) metrics, judged by a model on a 0-1 scale.

Each prompt gives the judge the procedure of the usual definition (the claims or
statements to check, and the fraction to compute), so scores mean the same as elsewhere:

- faithfulness: the share of the response's claims the retrieved context supports;
- answer_relevancy: the share of the response's statements relevant to the input;
- contextual_precision: whether the chunks that matter for the expected response are
  ranked first (average precision over the relevant chunks);
- contextual_recall: the share of the expected response's statements the context supports;
- contextual_relevancy: the share of the context's statements relevant to the input.

The retrieval context is the test case's `retrieval_context`, else what the agent's tools
returned. A metric whose context or ground truth is missing is an error. With
`include_reason: false` the judge's reason is left out of the results and reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck.testing.metrics.judge import (
    UNIT,
    JudgeFactory,
    JudgeRequest,
    instructions,
    judge,
    missing,
    render,
)
from holodeck.testing.metrics.sample import Outcome, Sample
from holodeck.testing.results import MetricResult

if TYPE_CHECKING:
    from holodeck.spec.models.evaluations import RagMetric

# metric -> (what the judge sees, the procedure)
RAG_TASKS: dict[str, tuple[tuple[str, ...], str]] = {
    "faithfulness": (
        ("input", "output", "context"),
        "Measure how faithful the response is to the context. List the factual claims the "
        "response makes. For each, decide whether the context supports it (states it or it "
        "directly follows); a claim the context contradicts or does not mention is not "
        "supported. Use no outside knowledge. The score is the number of supported claims "
        "divided by the number of claims; 1 when the response makes no factual claim.",
    ),
    "answer_relevancy": (
        ("input", "output"),
        "Measure how relevant the response is to the input. Split the response into "
        "statements. For each, decide whether it helps answer the input. The score is the "
        "number of relevant statements divided by the number of statements; 0 when the "
        "response is empty.",
    ),
    "contextual_precision": (
        ("input", "expected", "context"),
        "Measure whether the context chunks that matter are ranked first. The chunks are "
        "numbered in retrieval order. For each chunk k, decide whether it is relevant: it "
        "holds information needed for the expected response. Then the score is "
        "(1/R) × Σ over relevant chunks k of (relevant chunks among 1..k) / k, where R is "
        "the number of relevant chunks; 0 when no chunk is relevant. Example: relevant "
        "chunks 1 and 3 of 3 give (1/1 + 2/3) / 2 = 0.83.",
    ),
    "contextual_recall": (
        ("input", "expected", "context"),
        "Measure how much of the expected response the context supports. Split the expected "
        "response into statements. For each, decide whether it can be attributed to the "
        "context. The score is the number of attributable statements divided by the number "
        "of statements.",
    ),
    "contextual_relevancy": (
        ("input", "context"),
        "Measure how relevant the context is to the input. Split the context into "
        "statements. For each, decide whether it is relevant to answering the input. The "
        "score is the number of relevant statements divided by the number of statements.",
    ),
}


async def evaluate_rag(metric: RagMetric, sample: Sample, judges: JudgeFactory) -> MetricResult:
    name = metric.metric_type
    parts, task = RAG_TASKS[name]
    outcome = Outcome(name, "rag", metric.threshold, metric.fail_on_error)
    problem = missing(parts, sample, name)
    if problem:
        return outcome.error(problem)
    result = await judge(
        JudgeRequest(
            outcome, metric.model, instructions(task, parts, UNIT), render(sample, parts), UNIT
        ),
        judges,
    )
    if not metric.include_reason:
        # the judge still reasons first (it scores better so); the results just omit it
        return result.model_copy(update={"reason": None})
    return result
