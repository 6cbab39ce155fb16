"""A signal to whoever started a turn that its first model request is starting.

`holodeck test` lets one case at a time go from its start to its first model request,
then the next (see `testing/runner.py`): its requests leave one after another instead of
all at once after every case's preparation, so answers come back spread out and no case
waits for the CPU work of nine others before its request leaves."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from holodeck.llm.before_request import BeforeRequestModel

# Tasks copy their context when created, so the turn's tasks (and pydantic-ai's graph
# tasks under them) see the callback set by the code that started the turn.
_callback: ContextVar[Callable[[], None] | None] = ContextVar("first_request", default=None)


@contextmanager
def on_first_request(callback: Callable[[], None]) -> Iterator[None]:
    """Call `callback` when a model request starts in this context. It may be called more
    than once (by each task that copied the context): make it idempotent."""
    token = _callback.set(callback)
    try:
        yield
    finally:
        _callback.reset(token)


class SignallingModel(BeforeRequestModel):
    """Calls the context's `on_first_request` callback as each request starts."""

    async def before_request(self) -> None:
        callback = _callback.get()
        if callback is not None:
            _callback.set(None)
            callback()
