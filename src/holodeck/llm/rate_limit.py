"""A global request rate limit shared by every model of a run (the agent's, its prompt
tools', sub-agents' and metric judges'), so concurrent test cases stay under a quota. A
subclass sees every request of the run too: `holodeck test optimize` counts them."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from holodeck.llm.before_request import BeforeRequestModel

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelResponse


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

    def answered(self, response: ModelResponse) -> None:
        """Told of each answer to a request `acquire` let through (nothing here)."""


class RateLimitedModel(BeforeRequestModel):
    def __init__(self, wrapped: Any, limiter: RateLimiter) -> None:
        super().__init__(wrapped)
        self.limiter = limiter

    async def before_request(self) -> None:
        await self.limiter.acquire()

    def after_response(self, response: ModelResponse) -> None:
        self.limiter.answered(response)
