"""The span of a served turn (kind SERVER, named for its endpoint): the agent's
`invoke_agent` span nests under it, and the request log line carries its trace and
span ids. Only when the agent's observability is on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from holodeck.observability import Telemetry

E = TypeVar("E")


async def traced_stream(
    telemetry: Telemetry | None,
    name: str,
    attributes: dict[str, Any],
    start: Callable[[], AsyncIterator[E]],
    on_ids: Callable[[str, str], None],
    attributes_of: Callable[[E], dict[str, Any]] | None = None,
) -> AsyncIterator[E]:
    """`start()`'s events, begun inside a server span that ends with the stream;
    `attributes_of(event)` adds attributes to the span as events pass."""
    if telemetry is None:
        async for event in start():
            yield event
        return
    from opentelemetry import context, trace

    span = telemetry.tracer.start_span(name, kind=trace.SpanKind.SERVER, attributes=attributes)
    ids = span.get_span_context()
    on_ids(format(ids.trace_id, "032x"), format(ids.span_id, "016x"))
    events = start()
    failed: BaseException | None = None
    try:
        # current only while the turn starts (its task copies the context), never across
        # a yield of this generator, whose caller's context is not ours to change
        token = context.attach(trace.set_span_in_context(span))
        try:
            first = await anext(events, None)
        finally:
            context.detach(token)
        if first is None:
            return
        if attributes_of is not None:
            span.set_attributes(attributes_of(first))
        yield first
        async for event in events:
            if attributes_of is not None:
                span.set_attributes(attributes_of(event))
            yield event
    except BaseException as exc:
        failed = exc
        raise
    finally:
        if failed is not None:
            span.set_status(trace.Status(trace.StatusCode.ERROR, type(failed).__name__))
        span.end()
