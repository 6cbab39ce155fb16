"""Metrics derived from finished spans, so they come from one place and count every
turn whatever the trace sampling: model request and turn durations
(`gen_ai.client.operation.duration`, GenAI semantic conventions), tool calls and their
failures, and test case outcomes. Token usage is recorded by pydantic-ai itself
(`gen_ai.client.token.usage`)."""

from __future__ import annotations

from typing import Any

from holodeck.observability import names

# the GenAI semantic conventions' advised buckets for operation durations, in seconds
_DURATION_BUCKETS = [
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
]
_KEPT = (
    "gen_ai.operation.name",
    "gen_ai.provider.name",
    "gen_ai.request.model",
    "gen_ai.response.model",
    "gen_ai.agent.name",
)


def span_metrics_processor(meter: Any) -> Any:
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
    from opentelemetry.trace import StatusCode

    duration = meter.create_histogram(
        "gen_ai.client.operation.duration",
        unit="s",
        description="GenAI operation duration",
        explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
    )
    tool_calls = meter.create_counter(
        "holodeck.tool.calls", unit="{call}", description="Tool calls, by tool"
    )
    tool_errors = meter.create_counter(
        "holodeck.tool.errors", unit="{call}", description="Tool calls that failed, by tool"
    )
    cases = meter.create_counter(
        "holodeck.test.cases", unit="{case}", description="Test case runs, by status"
    )

    class SpanMetrics(SpanProcessor):
        def on_end(self, span: ReadableSpan) -> None:
            attributes = span.attributes or {}
            operation = attributes.get(names.OPERATION)
            if span.start_time is None or span.end_time is None:
                return
            failed = span.status.status_code is StatusCode.ERROR
            if operation in ("chat", "invoke_agent"):
                kept = {k: attributes[k] for k in _KEPT if k in attributes}
                if failed:
                    kept["error.type"] = _error_type(span)
                duration.record((span.end_time - span.start_time) / 1e9, kept)
            elif operation == "execute_tool":
                tool = {"gen_ai.tool.name": str(attributes.get("gen_ai.tool.name", ""))}
                tool_calls.add(1, tool)
                if failed:
                    tool_errors.add(1, {**tool, "error.type": _error_type(span)})
            elif names.CASE_STATUS in attributes:
                cases.add(1, {names.CASE_STATUS: str(attributes[names.CASE_STATUS])})

    return SpanMetrics()


def _error_type(span: Any) -> str:
    described = span.status.description or ""
    return described.split(":", 1)[0] or "error"
