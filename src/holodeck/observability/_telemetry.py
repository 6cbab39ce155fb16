"""`Telemetry`: the OpenTelemetry providers of one `observability:` configuration.

Built with explicit providers (never the global ones), so an embedding program's own
OpenTelemetry set-up is left alone. Export runs on the SDK's background workers with
bounded queues and timeouts: a slow or dead collector drops telemetry, it never slows
or fails a turn."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from holodeck._version import __version__
from holodeck.observability import _exporters as exporters
from holodeck.observability import names
from holodeck.observability._prometheus import prometheus_reader
from holodeck.observability._redact import Redactor, redacting_exporter, redacting_log_processor
from holodeck.observability._sampling import record_all_sampler
from holodeck.observability._span_metrics import span_metrics_processor
from holodeck.observability._tree import SpanNode, span_trees
from holodeck.spec.models.observability_settings import ObservabilitySettings

# Flushing at the end of a run waits at most this long, whatever the export timeout.
FLUSH_LIMIT_MS = 5000
STALLED_LIMIT_MS = 500
_LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}


class Telemetry:
    """Tracer, meter and logger providers (the runtime instruments its model calls with
    them: `holodeck.runtime._instrumented`).

    `Telemetry(settings, "svc")` starts the exporters `settings` asks for;
    `shutdown()` flushes and stops them. Agents share one per configuration
    (`shared_telemetry`)."""

    def __init__(
        self,
        settings: ObservabilitySettings,
        service_name: str,
        *,
        env: Mapping[str, str] | None = None,
        exporting: bool = True,
    ) -> None:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider

        env = os.environ if env is None else env
        self.settings = settings
        self.service_name = service_name
        self.redactor = Redactor(settings.traces.redaction_patterns)
        # Resource.create also reads OTEL_RESOURCE_ATTRIBUTES
        resource = Resource.create({**settings.resource_attributes, "service.name": service_name})
        where = exporters.destinations(settings, env) if exporting else None
        self._closers: list[Callable[[], None]] = []
        self.meter_provider = MeterProvider(
            resource=resource,
            metric_readers=self._metric_readers(where, env) if exporting else [],
            shutdown_on_exit=False,
        )
        self.tracer_provider = TracerProvider(
            resource=resource,
            sampler=record_all_sampler(settings.traces.sample_rate),
            shutdown_on_exit=False,
        )
        counting = settings.metrics.enabled and exporting
        self.counts_metrics = counting  # model calls' metrics too
        if counting:
            meter = self.meter_provider.get_meter("holodeck", __version__)
            self.tracer_provider.add_span_processor(span_metrics_processor(meter))
        if where is not None and settings.traces.enabled:
            self._span_exporters(where, env)
        self.logger_provider: Any = None
        if where is not None and settings.logs.enabled:
            self._log_export(where, env)
        self.tracer = self.tracer_provider.get_tracer("holodeck", __version__)
        self.capture_content = settings.traces.capture_content
        self._stalled = False

    # -- what is exported where

    def _span_exporters(self, where: exporters.Destinations, env: Mapping[str, str]) -> None:
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        traces = self.settings.traces
        for exporter in exporters.chosen(where, "traces", env):
            if self.redactor:
                exporter = redacting_exporter(exporter, self.redactor)
            self.tracer_provider.add_span_processor(
                BatchSpanProcessor(
                    exporter,
                    max_queue_size=traces.max_queue_size,
                    schedule_delay_millis=traces.schedule_delay_millis,
                    max_export_batch_size=traces.max_export_batch_size,
                    export_timeout_millis=exporters.export_timeout_ms(self.settings, env),
                )
            )

    def _metric_readers(
        self, where: exporters.Destinations | None, env: Mapping[str, str]
    ) -> list[Any]:
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        metrics = self.settings.metrics
        if where is None or not metrics.enabled:
            return []
        readers: list[Any] = []
        for exporter in exporters.chosen(where, "metrics", env):
            readers.append(
                PeriodicExportingMetricReader(
                    exporter,
                    export_interval_millis=metrics.export_interval_ms,
                    export_timeout_millis=exporters.export_timeout_ms(self.settings, env),
                )
            )
        prometheus = self.settings.exporters.prometheus
        if prometheus is not None and prometheus.enabled:
            reader, stop = prometheus_reader(prometheus)
            readers.append(reader)
            self._closers.append(stop)
        return readers

    def _log_export(self, where: exporters.Destinations, env: Mapping[str, str]) -> None:
        from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

        logs = self.settings.logs
        provider = LoggerProvider(resource=self.tracer_provider.resource, shutdown_on_exit=False)
        if self.redactor:  # first: the exporting processors get the rewritten record
            provider.add_log_record_processor(redacting_log_processor(self.redactor))
        for exporter in exporters.chosen(where, "logs", env):
            provider.add_log_record_processor(BatchLogRecordProcessor(exporter))
        level = _LEVELS[logs.level]
        # the handler takes the current span's trace and span ids into each record
        with warnings.catch_warnings():  # its successor is a separate package; this one works
            warnings.simplefilter("ignore", DeprecationWarning)
            handler = LoggingHandler(level=level, logger_provider=provider)
        for namespace in logs.filter_namespaces:
            logger = logging.getLogger(namespace)
            logger.addHandler(handler)
            if logger.getEffectiveLevel() > level:
                logger.setLevel(level)
            self._closers.append(lambda logger=logger: logger.removeHandler(handler))  # type: ignore[misc]
        self.logger_provider = provider

    # -- use

    def watch_traces(self, on_trace: Callable[[list[SpanNode]], None]) -> None:
        """Call `on_trace` with each trace's span tree when its root span ends."""
        self.tracer_provider.add_span_processor(span_trees(on_trace))

    @contextmanager
    def span(self, name: str, attributes: dict[str, Any] | None = None) -> Iterator[Any]:
        """A span of HoloDeck's own (a test case, a metric), current inside the block."""
        with self.tracer.start_as_current_span(name, attributes=attributes) as span:
            yield span

    def handoff(self, from_agent: str, to_agent: str, reason: str | None, back: bool) -> None:
        """A span `handoff <to_agent>` under the current one (the turn's): where in the
        turn the conversation passed from one agent to another, and why."""
        attributes: dict[str, Any] = {
            names.HANDOFF_FROM: from_agent,
            names.HANDOFF_TO: to_agent,
            names.HANDOFF_BACK: back,
        }
        if reason:
            attributes[names.HANDOFF_REASON] = self.content(reason)
        self.tracer.start_span(f"{names.HANDOFF_SPAN} {to_agent}", attributes=attributes).end()

    def content(self, text: str) -> str:
        """`text` as captured content: redacted."""
        return self.redactor.text(text)

    def flush(self, timeout_ms: int = FLUSH_LIMIT_MS) -> bool:
        """Export what is waiting, for at most `timeout_ms` in all; False when it did
        not finish (a dead collector: what is left goes when it can, or is dropped)."""
        done = _within(timeout_ms, self._flush_all)
        self._stalled = not done
        return done

    def _flush_all(self) -> None:
        for provider in (self.tracer_provider, self.meter_provider, self.logger_provider):
            if provider is not None:
                provider.force_flush()

    async def aflush(self, timeout_ms: int = FLUSH_LIMIT_MS) -> bool:
        """`flush` off the event loop: other turns keep running meanwhile."""
        return await asyncio.to_thread(self.flush, timeout_ms)

    def shutdown(self) -> None:
        """Flush and stop the exporters, waiting at most FLUSH_LIMIT_MS; idempotent."""
        for close in self._closers:
            close()
        self._closers.clear()
        # a flush that just timed out means the collector is not answering: do not wait
        # the whole limit a second time
        _within(STALLED_LIMIT_MS if self._stalled else FLUSH_LIMIT_MS, self._stop_all)

    def _stop_all(self) -> None:
        self._flush_all()
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()
        if self.logger_provider is not None:
            self.logger_provider.shutdown()


def _within(timeout_ms: int, work: Callable[[], None]) -> bool:
    """Run `work` and wait for it at most `timeout_ms`; True if it finished.

    The SDK's flush and shutdown block for as long as an export retries (up to the
    exporter's timeout, per signal), so they run on a thread of their own, joined when
    the work finishes in time."""
    done = threading.Event()

    def run() -> None:
        try:
            work()
        finally:
            done.set()

    # a daemon: an export to a dead collector cannot be interrupted; past the limit the
    # thread is left to end when the export gives up, without holding up the exit
    thread = threading.Thread(target=run, name="holodeck-telemetry-flush", daemon=True)
    thread.start()
    finished = done.wait(timeout_ms / 1000)
    if finished:
        thread.join()
    return finished


_SHARED: dict[tuple[str, str], Telemetry] = {}
# the holders of each shared Telemetry (by id): the `Run`s whose agents use it; the last
# to let go stops its exporters, while another Run still using it keeps them
_HOLDERS: dict[int, int] = {}
_SHARED_LOCK = threading.Lock()


def shared_telemetry(
    settings: ObservabilitySettings, service_name: str, env: Mapping[str, str] | None = None
) -> Telemetry:
    """The process's one `Telemetry` for this configuration and service (agents of one
    process share exporters rather than opening one connection each). `env` (default
    the process's) supplies the OTEL_* variables the block leaves out."""
    key = (settings.model_dump_json(), service_name)
    with _SHARED_LOCK:
        found = _SHARED.get(key)
        if found is None:
            found = _SHARED[key] = Telemetry(settings, service_name, env=env)
        return found


def hold_shared(telemetry: Telemetry) -> bool:
    """Count one more holder of `telemetry` if it is a shared one (True); a caller's own
    Telemetry is the caller's to stop (False)."""
    with _SHARED_LOCK:
        if not any(found is telemetry for found in _SHARED.values()):
            return False
        _HOLDERS[id(telemetry)] = _HOLDERS.get(id(telemetry), 0) + 1
        return True


async def release_shared(telemetry: Telemetry) -> None:
    """One holder of `telemetry` is done; the last flushes and stops it."""
    with _SHARED_LOCK:
        left = _HOLDERS.get(id(telemetry), 0) - 1
        if left > 0:
            _HOLDERS[id(telemetry)] = left
            return
        _HOLDERS.pop(id(telemetry), None)
        for key, found in list(_SHARED.items()):
            if found is telemetry:
                del _SHARED[key]
    await asyncio.to_thread(telemetry.shutdown)


async def shutdown_shared() -> None:
    """Flush and stop every shared `Telemetry`, held or not (a program's own end)."""
    with _SHARED_LOCK:
        telemetries = list(_SHARED.values())
        _SHARED.clear()
        _HOLDERS.clear()
    for telemetry in telemetries:
        await asyncio.to_thread(telemetry.shutdown)
