"""The exporters an `observability:` block asks for, built from the OpenTelemetry SDK
(imported only here, and only when observability is on).

Fields left out fall back to the standard `OTEL_EXPORTER_OTLP_*` variables, which the
SDK's exporters read themselves; the protocol is chosen here because it picks the class."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any, cast

from holodeck.spec.models.observability_settings import (
    ConsoleExporter,
    ObservabilitySettings,
    OtlpExporter,
)

DEFAULT_TIMEOUT_MS = 10_000
_SIGNAL_PATHS = {"traces": "/v1/traces", "metrics": "/v1/metrics", "logs": "/v1/logs"}


@dataclass(frozen=True)
class Destinations:
    """Which exporters are on, after defaults: console unless something else is."""

    console: ConsoleExporter | None
    otlp: OtlpExporter | None


def destinations(settings: ObservabilitySettings, env: Mapping[str, str]) -> Destinations:
    exporters = settings.exporters
    console = exporters.console if exporters.console and exporters.console.enabled else None
    otlp = exporters.otlp if exporters.otlp and exporters.otlp.enabled else None
    prometheus = exporters.prometheus is not None and exporters.prometheus.enabled
    if console is None and otlp is None and not prometheus and exporters.console is None:
        if env.get("OTEL_EXPORTER_OTLP_ENDPOINT") and exporters.otlp is None:
            otlp = OtlpExporter()
        else:
            console = ConsoleExporter()
    return Destinations(console, otlp)


def missing_exporters(settings: ObservabilitySettings, env: Mapping[str, str]) -> list[str]:
    """The exporters `settings` turns on whose package is not installed (the SDK and the
    console exporter are in the base install; OTLP and Prometheus are the otel extra)."""
    chosen = destinations(settings, env)
    needed = {}
    if chosen.otlp is not None:
        grpc = protocol_of(chosen.otlp, env) == "grpc"
        module = f"opentelemetry.exporter.otlp.proto.{'grpc' if grpc else 'http'}"
        needed[f"OTLP ({'grpc' if grpc else 'http'})"] = module
    prometheus = settings.exporters.prometheus
    if prometheus is not None and prometheus.enabled:
        needed["Prometheus"] = "opentelemetry.exporter.prometheus"
    return [name for name, module in needed.items() if not _installed(module)]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def protocol_of(otlp: OtlpExporter, env: Mapping[str, str]) -> str:
    chosen = otlp.protocol or env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "").strip() or "grpc"
    return "grpc" if chosen == "grpc" else "http"


def _otlp_exporter(otlp: OtlpExporter, signal: str, env: Mapping[str, str]) -> Any:
    """The OTLP exporter of `signal` ("traces", "metrics" or "logs")."""
    timeout = (otlp.timeout_ms or _env_timeout_ms(env) or DEFAULT_TIMEOUT_MS) / 1000
    headers = dict(otlp.headers) or None
    if protocol_of(otlp, env) == "grpc":
        return _grpc(otlp, signal, timeout, headers)
    return _http(otlp, signal, timeout, headers)


def _grpc(otlp: OtlpExporter, signal: str, timeout: float, headers: Any) -> Any:
    import grpc  # type: ignore[import-untyped]

    kwargs: dict[str, Any] = {"timeout": timeout, "headers": headers}
    if otlp.endpoint is not None:
        kwargs["endpoint"] = otlp.endpoint
    if otlp.insecure is not None:
        kwargs["insecure"] = otlp.insecure
    if otlp.compression is not None:
        kwargs["compression"] = (
            grpc.Compression.Gzip if otlp.compression == "gzip" else grpc.Compression.NoCompression
        )
    if signal == "traces":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(**kwargs)
    if signal == "metrics":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter(**kwargs)
    from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter

    return OTLPLogExporter(**kwargs)


def _http(otlp: OtlpExporter, signal: str, timeout: float, headers: Any) -> Any:
    from opentelemetry.exporter.otlp.proto.http import Compression

    kwargs: dict[str, Any] = {"timeout": timeout, "headers": headers}
    if otlp.endpoint is not None:  # a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is
        kwargs["endpoint"] = otlp.endpoint.rstrip("/") + _SIGNAL_PATHS[signal]
    if otlp.compression is not None:
        kwargs["compression"] = Compression(otlp.compression)
    if signal == "traces":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(**kwargs)
    if signal == "metrics":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter(**kwargs)
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter

    return OTLPLogExporter(**kwargs)


def export_timeout_ms(settings: ObservabilitySettings, env: Mapping[str, str]) -> int:
    otlp = settings.exporters.otlp
    own = otlp.timeout_ms if otlp is not None else None
    return own or _env_timeout_ms(env) or DEFAULT_TIMEOUT_MS


def _env_timeout_ms(env: Mapping[str, str]) -> int | None:
    try:
        return int(env.get("OTEL_EXPORTER_OTLP_TIMEOUT", "")) or None
    except ValueError:
        return None


def chosen(where: Destinations, signal: str, env: Mapping[str, str]) -> list[Any]:
    """The exporters of `signal` ("traces", "metrics" or "logs") that `where` names."""
    found = []
    if where.otlp is not None:
        found.append(_otlp_exporter(where.otlp, signal, env))
    if where.console is not None:
        console = {
            "traces": _console_spans,
            "metrics": _console_metrics,
            "logs": _console_logs,
        }[signal]
        found.append(console(where.console))
    return found


def _console_spans(console: ConsoleExporter) -> Any:
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    def formatted(span: Any) -> str:
        data = json.loads(span.to_json(indent=None))
        if not console.include_timestamps:
            data.pop("start_time", None)
            data.pop("end_time", None)
            for event in data.get("events", []):
                event.pop("timestamp", None)
        return json.dumps(data, indent=4 if console.pretty_print else None) + os.linesep

    # standard error: standard output is the chat's, or a report's
    return ConsoleSpanExporter(out=_STDERR, formatter=formatted)


class _CurrentStderr(io.TextIOBase):
    """Standard error as it is when written to: the exporters' threads outlive a
    `sys.stderr` that is swapped (a test's capture, a redirected CLI) and closed."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


_STDERR = cast("IO[str]", _CurrentStderr())  # typeshed's IO is not TextIOBase


def _console_metrics(console: ConsoleExporter) -> Any:
    from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

    indent = 4 if console.pretty_print else None
    return ConsoleMetricExporter(
        out=_STDERR, formatter=lambda data: data.to_json(indent=indent) + os.linesep
    )


def _console_logs(console: ConsoleExporter) -> Any:
    from opentelemetry.sdk._logs.export import ConsoleLogRecordExporter

    def formatted(record: Any) -> str:
        data = json.loads(record.to_json(indent=None))
        if not console.include_timestamps:
            data.pop("timestamp", None)
            data.pop("observed_timestamp", None)
        return json.dumps(data, indent=4 if console.pretty_print else None) + os.linesep

    return ConsoleLogRecordExporter(out=_STDERR, formatter=formatted)
