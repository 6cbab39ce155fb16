"""Every model request of a search, counted and priced: the agent's, its judges' and the
proposer's all pass through the run's rate limiter, so the meter is one."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from holodeck.runtime import RateLimiter


@dataclass
class Meter(RateLimiter):
    """Counts requests and prices answers; `limit` (--rate-limit) still applies."""

    per_minute: int = 0  # unused: `limit` paces the requests, if given
    limit: RateLimiter | None = None
    calls: int = 0
    cost: Decimal = Decimal(0)
    unpriced: str | None = None  # why some answer could not be priced

    async def acquire(self) -> None:
        self.calls += 1
        if self.limit is not None:
            await self.limit.acquire()

    def answered(self, response: Any) -> None:  # a pydantic-ai ModelResponse
        try:
            self.cost += response.cost().total_price
        except (LookupError, ValueError, AssertionError):
            self.unpriced = self.unpriced or f"no price data for {response.model_name or 'a model'}"
