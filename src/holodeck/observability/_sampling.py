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

        def should_sample(self, *args: Any, **kwargs: Any) -> SamplingResult:
            result = self._inner.should_sample(*args, **kwargs)
            if result.decision is Decision.DROP:
                return SamplingResult(Decision.RECORD_ONLY, None, result.trace_state)
            return result

        def get_description(self) -> str:
            return f"RecordAll{{{rate}}}"

    return RecordAll()
