"""Spans of `holodeck test`: one per run of a case (`test_case <name>`, its turns nested,
with what its model requests cost when the model is priced),
one per metric (`evaluate <metric>`, the judge's model calls nested). Only when the
agent's observability is on; otherwise these call straight through."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any

from holodeck.observability import names
from holodeck.testing.metrics import evaluate, evaluate_one

if TYPE_CHECKING:
    from holodeck.observability import Telemetry
    from holodeck.spec.models.evaluations import Metric
    from holodeck.testing.metrics import JudgeFactory, Sample
    from holodeck.testing.results import CaseRun, MetricResult


async def traced_case(
    telemetry: Telemetry | None, name: str, attempt: int, run: Awaitable[CaseRun]
) -> CaseRun:
    """`run`, inside a `test_case` span that records its status."""
    if telemetry is None:
        return await run
    attributes = {names.CASE_NAME: name, names.CASE_ATTEMPT: attempt}
    with telemetry.span(f"{names.TEST_CASE_SPAN} {name}", attributes) as span:
        result = await run
        span.set_attribute(names.CASE_STATUS, result.status)
        if result.cost_usd is not None:  # an unpriced model's case has no cost, not 0
            span.set_attribute(names.COST_USD, float(result.cost_usd))
        if result.status == "error":
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, result.error or "error"))
        return result


async def traced_metrics(
    metrics: Sequence[Metric], sample: Sample, judges: JudgeFactory
) -> list[MetricResult]:
    """`evaluate(metrics, sample, judges)`, each metric in a span of its own."""

    telemetry = judges.telemetry
    if telemetry is None:
        return await evaluate(metrics, sample, judges)

    async def one(metric: Any) -> MetricResult:
        label = getattr(metric, "name", None) or getattr(metric, "metric", None) or "metric"
        with telemetry.span(f"{names.METRIC_SPAN} {label}", {names.METRIC_NAME: label}) as span:
            if telemetry.settings.traces.capture_evaluation_content:
                span.set_attribute(names.METRIC_INPUT, telemetry.content(sample.input))
                span.set_attribute(names.METRIC_OUTPUT, telemetry.content(sample.output))
                if sample.ground_truth is not None:
                    expected = telemetry.content(sample.ground_truth)
                    span.set_attribute(names.METRIC_EXPECTED, expected)
            result = await evaluate_one(metric, sample, judges)
            span.set_attribute(names.METRIC_STATUS, result.status)
            if result.score is not None:
                span.set_attribute(names.METRIC_SCORE, result.score)
            if result.threshold is not None:
                span.set_attribute(names.METRIC_THRESHOLD, result.threshold)
            if result.status == "error":
                from opentelemetry.trace import Status, StatusCode

                span.set_status(Status(StatusCode.ERROR, result.error or "error"))
            return result

    return list(await asyncio.gather(*(one(m) for m in metrics if m.enabled)))
