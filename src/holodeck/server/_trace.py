"""The span of a served turn (kind SERVER, named for its endpoint): the agent's
`invoke_agent` span nests under it, and the request log line carries its trace and
span ids. Only when the agent's observability is on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from holodeck.observability import Telemetry


class ServedSpan:
    """A started span; `current()` makes it the parent of what starts inside it."""

    __slots__ = ("_span", "ids")

    def __init__(self, telemetry: Telemetry, name: str, attributes: dict[str, Any]) -> None:
        from opentelemetry import trace

        self._span = telemetry.tracer.start_span(
            name, kind=trace.SpanKind.SERVER, attributes=attributes
        )
        context = self._span.get_span_context()
        self.ids = (format(context.trace_id, "032x"), format(context.span_id, "016x"))

    @contextmanager
    def current(self) -> Iterator[None]:
        """The span as the current one for a step of the turn: only around a step, never
        across a yield of the turn's generator, whose reader's context is not ours to
        change (the turn's task copies the context when it starts)."""
        from opentelemetry import context, trace

        token = context.attach(trace.set_span_in_context(self._span))
        try:
            yield
        finally:
            context.detach(token)

    def add(self, attributes: dict[str, Any]) -> None:
        if attributes:
            self._span.set_attributes(attributes)

    def end(self, failed: BaseException | None) -> None:
        from opentelemetry import trace

        if failed is not None:
            self._span.set_status(trace.Status(trace.StatusCode.ERROR, type(failed).__name__))
        self._span.end()


def served_span(
    telemetry: Telemetry | None, name: str, attributes: dict[str, Any]
) -> ServedSpan | None:
    """The turn's span, or None when the agent does not trace."""
    return None if telemetry is None else ServedSpan(telemetry, name, attributes)
