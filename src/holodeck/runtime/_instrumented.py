"""Model calls traced into a `Telemetry`: pydantic-ai's GenAI-convention spans (and,
when the telemetry counts, its metrics) over the telemetry's providers."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic_ai import InstrumentationSettings

    from holodeck.observability import Telemetry

# one per telemetry, shared by every agent, prompt tool and judge that traces into it
_MADE: weakref.WeakKeyDictionary[Telemetry, InstrumentationSettings] = weakref.WeakKeyDictionary()


def instrumentation(telemetry: Telemetry) -> InstrumentationSettings:
    """What `Agent.instrument` takes to trace model calls into `telemetry`."""
    made = _MADE.get(telemetry)
    if made is None:
        from opentelemetry.metrics import NoOpMeterProvider
        from pydantic_ai import InstrumentationSettings

        content = telemetry.capture_content
        made = InstrumentationSettings(
            tracer_provider=telemetry.tracer_provider,
            # metrics off: pydantic-ai records none either (its histograms cost ~7% a turn)
            meter_provider=(
                telemetry.meter_provider if telemetry.counts_metrics else NoOpMeterProvider()
            ),
            include_content=content,
            include_model_request_parameters=content,
            version=5,
        )
        _MADE[telemetry] = made
    return made
