"""Redaction of captured content before it leaves the process: every string attribute
of a span and of its events, and its status message (a failed tool's error), is
rewritten, so a pattern also covers content that pydantic-ai's instrumentation captured
(prompts, answers, tool arguments and results)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

MARK = "[REDACTED]"


class Redactor:
    def __init__(self, patterns: Sequence[str]) -> None:
        self._pattern = re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, value: str) -> str:
        return self._pattern.sub(MARK, value) if self._pattern is not None else value

    def status(self, status: Any) -> Any:
        """A span status with its description redacted."""
        from opentelemetry.trace import Status

        if not status.description:
            return status
        return Status(status.status_code, self.text(status.description))

    def attributes(self, attributes: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in (attributes or {}).items():
            if isinstance(value, str):
                value = self.text(value)
            elif isinstance(value, tuple | list) and any(isinstance(v, str) for v in value):
                value = tuple(self.text(v) if isinstance(v, str) else v for v in value)
            out[key] = value
        return out


def redacting_exporter(exporter: Any, redactor: Redactor) -> Any:
    """`exporter`, sending copies of the spans with their strings redacted."""
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class RedactingExporter(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            cleaned = [
                ReadableSpan(
                    name=redactor.text(span.name),
                    context=span.context,
                    parent=span.parent,
                    resource=span.resource,
                    attributes=redactor.attributes(span.attributes),
                    events=[
                        Event(e.name, redactor.attributes(e.attributes), e.timestamp)
                        for e in span.events
                    ],
                    links=span.links,
                    kind=span.kind,
                    status=redactor.status(span.status),
                    start_time=span.start_time,
                    end_time=span.end_time,
                    instrumentation_scope=span.instrumentation_scope,
                )
                for span in spans
            ]
            result: SpanExportResult = exporter.export(cleaned)
            return result

        def shutdown(self) -> None:
            exporter.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return bool(exporter.force_flush(timeout_millis))

    return RedactingExporter()


def redacting_log_processor(redactor: Redactor) -> Any:
    """A log record processor, registered before the exporting ones, that rewrites each
    record's body and string attributes in place."""
    from opentelemetry.sdk._logs import LogRecordProcessor

    class RedactingLogs(LogRecordProcessor):
        def on_emit(self, emitted: Any) -> None:
            # both SDK generations wrap the record (`ReadWriteLogRecord`, earlier `LogData`)
            record = emitted.log_record
            if isinstance(record.body, str):
                record.body = redactor.text(record.body)
            if record.attributes:
                for key, value in redactor.attributes(record.attributes).items():
                    record.attributes[key] = value

        emit = on_emit  # the method's name before SDK 1.35

        def shutdown(self) -> None:
            pass

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return RedactingLogs()
