"""Metrics served for Prometheus: the SDK's Prometheus reader, answered on one path by a
small HTTP server that `Telemetry.shutdown()` stops."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from holodeck.errors import ConfigurationError
from holodeck.spec.models.observability_settings import PrometheusExporter


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # scrapes are not news
        pass


def prometheus_reader(settings: PrometheusExporter) -> tuple[Any, Callable[[], None]]:
    """The metric reader, and the function that stops its server."""
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import CollectorRegistry, make_wsgi_app

    registry = CollectorRegistry(auto_describe=True)  # this server's own, not the global one
    reader = PrometheusMetricReader(registry=registry)
    metrics = make_wsgi_app(registry)

    def app(environ: dict[str, Any], start: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != settings.path:
            start("404 Not Found", [("Content-Type", "text/plain")])
            return [f"metrics are at {settings.path}\n".encode()]
        return metrics(environ, start)  # type: ignore[no-any-return]

    try:
        server: WSGIServer = make_server(settings.host, settings.port, app, handler_class=_Quiet)
    except OSError as exc:
        raise ConfigurationError(
            f"observability.exporters.prometheus: cannot listen on "
            f"{settings.host}:{settings.port}: {exc.strerror or exc}",
            hint="choose a free `port` (and a `host` of this machine)",
        ) from None
    thread = threading.Thread(target=server.serve_forever, name="holodeck-prometheus", daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return reader, stop
