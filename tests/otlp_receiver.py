"""A local OTLP receiver for the tests: HTTP (protobuf) and gRPC, decoding what the real
exporters send into spans, metric names and log records the tests can look at.

    with otlp_http() as receiver:   # receiver.endpoint: http://127.0.0.1:PORT
        ...
        receiver.wait_for_spans(lambda spans: ..., timeout=10)
"""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from local_http import LocalHTTPServer


@dataclass(frozen=True)
class Span:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    status_code: int  # 2: error
    status_message: str
    resource: dict[str, Any]


@dataclass(frozen=True)
class LogRecord:
    body: str
    severity: str
    trace_id: str
    span_id: str


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs}


@dataclass
class Received:
    """Everything the receiver decoded, and the content types and headers it was sent with."""

    spans: list[Span] = field(default_factory=list)
    metrics: set[str] = field(default_factory=set)
    metric_points: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    logs: list[LogRecord] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    endpoint: str = ""  # the receiver's base URL, once it listens

    def add_traces(self, request: Any) -> None:
        with self.lock:
            for resource_spans in request.resource_spans:
                resource = _attributes(resource_spans.resource.attributes)
                for scope in resource_spans.scope_spans:
                    for s in scope.spans:
                        self.spans.append(
                            Span(
                                name=s.name,
                                trace_id=s.trace_id.hex(),
                                span_id=s.span_id.hex(),
                                parent_id=s.parent_span_id.hex(),
                                attributes=_attributes(s.attributes),
                                status_code=s.status.code,
                                status_message=s.status.message,
                                resource=resource,
                            )
                        )

    def add_metrics(self, request: Any) -> None:
        with self.lock:
            for resource_metrics in request.resource_metrics:
                for scope in resource_metrics.scope_metrics:
                    for metric in scope.metrics:
                        self.metrics.add(metric.name)
                        kind = metric.WhichOneof("data")
                        points = getattr(metric, kind).data_points
                        self.metric_points.setdefault(metric.name, []).extend(
                            {"attributes": _attributes(p.attributes), **_point(p)} for p in points
                        )

    def add_logs(self, request: Any) -> None:
        with self.lock:
            for resource_logs in request.resource_logs:
                for scope in resource_logs.scope_logs:
                    for record in scope.log_records:
                        self.logs.append(
                            LogRecord(
                                body=str(_value(record.body)),
                                severity=record.severity_text,
                                trace_id=record.trace_id.hex(),
                                span_id=record.span_id.hex(),
                            )
                        )

    def wait_for(self, ready: Callable[[Received], bool], timeout: float = 60.0) -> None:
        """Poll until `ready(self)` or fail after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                if ready(self):
                    return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"not received within {timeout}s: spans {[s.name for s in self.spans]}, "
                    f"metrics {sorted(self.metrics)}, logs {len(self.logs)}"
                )
            threading.Event().wait(0.02)


def _point(point: Any) -> dict[str, Any]:
    if hasattr(point, "bucket_counts"):  # a histogram's
        return {"count": point.count, "sum": point.sum}
    return {"value": getattr(point, point.WhichOneof("value"))}


_HTTP_PATHS: dict[str, tuple[Any, str]] = {
    "/v1/traces": (trace_service_pb2.ExportTraceServiceRequest, "add_traces"),
    "/v1/metrics": (metrics_service_pb2.ExportMetricsServiceRequest, "add_metrics"),
    "/v1/logs": (logs_service_pb2.ExportLogsServiceRequest, "add_logs"),
}


@contextmanager
def otlp_http() -> Iterator[Received]:
    """An OTLP/HTTP protobuf receiver on 127.0.0.1; `endpoint` is its base URL."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            encoding = self.headers.get("Content-Encoding")
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            found = _HTTP_PATHS.get(self.path)
            if found is None or self.headers.get("Content-Type") != "application/x-protobuf":
                self.send_response(404)
                self.end_headers()
                return
            message, add = found
            with received.lock:
                received.headers.append({k.lower(): v for k, v in self.headers.items()})
            request = message()
            request.ParseFromString(body)
            getattr(received, add)(request)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = LocalHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    received.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def otlp_grpc() -> Iterator[Received]:
    """An OTLP/gRPC receiver on 127.0.0.1 (plain text); `endpoint` is its URL."""
    import grpc  # type: ignore[import-untyped]

    received = Received()

    def recorded(context: Any) -> None:
        with received.lock:
            received.headers.append(dict(context.invocation_metadata()))

    class Traces(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:
            recorded(context)
            received.add_traces(request)
            return trace_service_pb2.ExportTraceServiceResponse()

    class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:
            recorded(context)
            received.add_metrics(request)
            return metrics_service_pb2.ExportMetricsServiceResponse()

    class Logs(logs_service_pb2_grpc.LogsServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:
            recorded(context)
            received.add_logs(request)
            return logs_service_pb2.ExportLogsServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)  # type: ignore[no-untyped-call]
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)  # type: ignore[no-untyped-call]
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Logs(), server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    received.endpoint = f"http://127.0.0.1:{port}"
    try:
        yield received
    finally:
        server.stop(grace=None)
