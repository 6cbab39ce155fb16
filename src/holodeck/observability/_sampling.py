"""Sampling that keeps metrics whole: a turn left out of the exported traces is still
recorded (`RECORD_ONLY`), so the processors deriving metrics and terminal trees see
every span while only the sampled share is exported."""

from __future__ import annotations

from typing import Any


def record_all_sampler(rate: float) -> Any:
    from opentelemetry.sdk.trace.sampling import (
        Decision,
        ParentBased,
        Sampler,
        SamplingResult,
        TraceIdRatioBased,
    )

    class RecordAll(Sampler):
        def __init__(self) -> None:
            self._inner = ParentBased(TraceIdRatioBased(rate))

        def should_sample(
            self,
            parent_context: Any,
            trace_id: int,
            name: str,
            kind: Any = None,
            attributes: Any = None,
            links: Any = None,
            trace_state: Any = None,
        ) -> SamplingResult:
            result = self._inner.should_sample(
                parent_context, trace_id, name, kind, attributes, links, trace_state
            )
            if result.decision is Decision.DROP:
                # the span keeps its attributes: the metrics read them when it ends
                return SamplingResult(Decision.RECORD_ONLY, attributes, result.trace_state)
            return result

        def get_description(self) -> str:
            return f"RecordAll{{{rate}}}"

    return RecordAll()
