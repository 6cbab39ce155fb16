"""The `observability:` block of agent.yaml and config.yaml: OpenTelemetry traces,
metrics and logs, and where they are exported (the shipped HoloDeck's field names).

Off unless `enabled: true`. Fields left out fall back to the standard `OTEL_*`
environment variables where one exists (endpoint, protocol, headers, timeout,
compression, service name), then to the defaults below."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from holodeck.spec.models.base import NonEmpty, Strict

# Shipped keys nothing here acts on, with why and what to write instead.
_REFUSED: dict[str, tuple[str, str]] = {
    "include_semantic_kernel_metrics": (
        "`include_semantic_kernel_metrics` chose Semantic Kernel's own metrics, and this "
        "HoloDeck does not run on Semantic Kernel",
        "remove it; model and tool metrics are always recorded when metrics are enabled",
    ),
    "azure_monitor": (
        "the Azure Monitor exporter is not built in",
        "send OTLP to an OpenTelemetry Collector with the Azure Monitor exporter, "
        "or to Application Insights' OTLP endpoint, under `exporters.otlp`",
    ),
}


def _refuse(data: Any) -> Any:
    if isinstance(data, dict):
        for key, (why, fix) in _REFUSED.items():
            if key in data:
                raise ValueError(f"{why}; {fix}")
    return data


class TracesSettings(Strict):
    """Spans of turns, model requests, tool calls and test cases."""

    enabled: bool = Field(default=True, description="Export traces (metrics still count).")
    sample_rate: Annotated[float, Field(ge=0.0, le=1.0)] = Field(
        default=1.0, description="Share of turns whose traces are exported (0.0 to 1.0)."
    )
    capture_content: bool = Field(
        default=False,
        description="Put prompts, answers and tool arguments and results in spans.",
    )
    capture_evaluation_content: bool = Field(
        default=False,
        description="Put a test case's input, output and ground truth in its metric spans.",
    )
    redaction_patterns: list[NonEmpty] = Field(
        default_factory=list,
        description="Regular expressions; what they match in captured content becomes [REDACTED].",
    )
    max_queue_size: Annotated[int, Field(ge=1)] = Field(
        default=2048, description="Spans waiting for export; beyond this the newest are dropped."
    )
    max_export_batch_size: Annotated[int, Field(ge=1)] = Field(
        default=512, description="Spans sent in one export request."
    )
    schedule_delay_millis: Annotated[int, Field(ge=1)] = Field(
        default=2000, description="Milliseconds between exports of waiting spans."
    )

    @field_validator("redaction_patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                problem = f"redaction pattern {pattern!r} is not a valid regex: {exc}"
                raise ValueError(problem) from None
        return patterns

    @model_validator(mode="after")
    def _batch_fits(self) -> TracesSettings:
        if self.max_export_batch_size > self.max_queue_size:
            raise ValueError("`max_export_batch_size` must not exceed `max_queue_size`")
        return self


class MetricsSettings(Strict):
    """Request duration, token usage, tool calls and failures, test case outcomes."""

    enabled: bool = True
    export_interval_ms: Annotated[int, Field(ge=100)] = Field(
        default=5000, description="Milliseconds between metric exports."
    )

    @model_validator(mode="before")
    @classmethod
    def _shipped_keys(cls, data: Any) -> Any:
        return _refuse(data)


class LogsSettings(Strict):
    """HoloDeck's log records exported as OpenTelemetry logs, with trace and span ids."""

    enabled: bool = True
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        default="WARNING", description="Least severe record exported."
    )
    include_trace_context: bool = Field(
        default=True,
        description="Add trace_id and span_id to the server's request log lines.",
    )
    filter_namespaces: list[NonEmpty] = Field(
        default_factory=lambda: ["holodeck"],
        description="Loggers whose records are exported (with their children).",
    )


class ConsoleExporter(Strict):
    """Spans, metrics and logs written to standard error as JSON."""

    enabled: bool = True
    pretty_print: bool = Field(default=True, description="Indented JSON, else one line each.")
    include_timestamps: bool = Field(default=True, description="Keep start and end times.")


class OtlpExporter(Strict):
    """An OTLP collector: Jaeger, Tempo, Honeycomb, Langfuse, Logfire, an OTel Collector."""

    enabled: bool = True
    endpoint: NonEmpty | None = Field(
        default=None,
        description="Collector URL (default OTEL_EXPORTER_OTLP_ENDPOINT, else "
        "http://localhost:4317 for grpc, http://localhost:4318 for http).",
    )
    protocol: Literal["grpc", "http", "http/protobuf"] | None = Field(
        default=None, description="Default OTEL_EXPORTER_OTLP_PROTOCOL, else grpc."
    )
    headers: dict[NonEmpty, str] = Field(
        default_factory=dict, description="Sent with each export (e.g. an API key)."
    )
    timeout_ms: Annotated[int, Field(ge=100)] | None = Field(
        default=None, description="Milliseconds one export may take (default 10000)."
    )
    compression: Literal["gzip", "deflate", "none"] | None = None
    insecure: bool | None = Field(
        default=None,
        description="grpc only: plain text instead of TLS (default: as the endpoint's "
        "scheme says).",
    )

    @model_validator(mode="after")
    def _grpc_only(self) -> OtlpExporter:
        if self.insecure is not None and self.protocol in ("http", "http/protobuf"):
            raise ValueError(
                "`insecure` applies to grpc; with http the endpoint's scheme decides "
                "(http:// or https://)"
            )
        if self.compression == "deflate" and self.protocol in (None, "grpc"):
            raise ValueError("grpc compresses with gzip only; use `compression: gzip`")
        return self


class PrometheusExporter(Strict):
    """Metrics served for Prometheus to scrape."""

    enabled: bool = False
    host: NonEmpty = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535)] = 8889
    path: NonEmpty = Field(default="/metrics", description="The only path answered.")

    @field_validator("path")
    @classmethod
    def _absolute(cls, path: str) -> str:
        if not path.startswith("/"):
            raise ValueError("`path` starts with /")
        return path


class ExportersSettings(Strict):
    """Where telemetry goes; with none enabled, to the console (or OTLP when
    OTEL_EXPORTER_OTLP_ENDPOINT is set)."""

    console: ConsoleExporter | None = None
    otlp: OtlpExporter | None = None
    prometheus: PrometheusExporter | None = None

    @model_validator(mode="before")
    @classmethod
    def _shipped_keys(cls, data: Any) -> Any:
        return _refuse(data)


class ObservabilitySettings(Strict):
    """OpenTelemetry for every run of the agent: `holodeck test`, `chat` and `deploy`."""

    enabled: bool = False
    service_name: NonEmpty | None = Field(
        default=None, description="Default OTEL_SERVICE_NAME, else holodeck-<agent name>."
    )
    resource_attributes: dict[NonEmpty, str] = Field(
        default_factory=dict, description="Added to every span, metric and log record."
    )
    traces: TracesSettings = Field(default_factory=TracesSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    logs: LogsSettings = Field(default_factory=LogsSettings)
    exporters: ExportersSettings = Field(default_factory=ExportersSettings)


def overlay_observability(
    base: ObservabilitySettings | None, top: ObservabilitySettings | None
) -> ObservabilitySettings | None:
    """`top` over `base` field by field, nested blocks included: an agent that sets
    only `traces.capture_content` keeps the global config's exporters."""
    if base is None or top is None:
        return top or base
    merged = _deep(base.model_dump(exclude_unset=True), top.model_dump(exclude_unset=True))
    return ObservabilitySettings.model_validate(merged)


def _deep(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        kept = out.get(key)
        # headers and resource attributes are replaced whole: a key set is not merged
        nested = key not in ("headers", "resource_attributes")
        if nested and isinstance(kept, dict) and isinstance(value, dict):
            out[key] = _deep(kept, value)
        else:
            out[key] = value
    return out
