"""A signal to whoever started a turn that its first model request is starting.

`holodeck test` lets one case at a time go from its start to its first model request,
then the next (see `testing/runner.py`): its requests leave one after another instead of
all at once after every case's preparation, so answers come back spread out and no case
waits for the CPU work of nine others before its request leaves."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

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


def _signal() -> None:
    callback = _callback.get()
    if callback is not None:
        _callback.set(None)
        callback()


class SignallingModel(WrapperModel):
    """Calls the context's `on_first_request` callback as each request starts."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        _signal()
        return await super().request(messages, model_settings, model_request_parameters)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        _signal()
        async with super().request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as stream:
            yield stream
