"""A global request rate limit shared by every model of a run (the agent's, its prompt
tools', sub-agents' and metric judges'), so concurrent test cases stay under a quota."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext


@dataclass
class RateLimiter:
    """At most `per_minute` model requests start in any 60-second window."""

    per_minute: int
    _starts: list[float] = field(default_factory=list)
    _locks: dict[int, asyncio.Lock] = field(default_factory=dict)

    async def acquire(self) -> None:
        lock = self._locks.setdefault(id(asyncio.get_running_loop()), asyncio.Lock())
        async with lock:
            while True:
                now = time.monotonic()
                self._starts = [t for t in self._starts if now - t < 60.0]
                if len(self._starts) < self.per_minute:
                    self._starts.append(now)
                    return
                await asyncio.sleep(60.0 - (now - self._starts[0]))


class RateLimitedModel(WrapperModel):
    def __init__(self, wrapped: Any, limiter: RateLimiter) -> None:
        super().__init__(wrapped)
        self.limiter = limiter

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        await self.limiter.acquire()
        return await super().request(messages, model_settings, model_request_parameters)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        await self.limiter.acquire()
        async with super().request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as stream:
            yield stream
