"""A model priced by its `cost:` block (per million tokens) instead of the price list
bundled with pydantic-ai: each answer carries its cost in `usage.cost`, which pydantic-ai
keeps (it prices only answers without one), so cost caps and reports use these numbers."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from holodeck.llm.before_request import BeforeRequestModel

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelResponse
    from pydantic_ai.usage import RequestUsage

    from holodeck.spec.models.model_settings import ModelCost

_MILLION = Decimal(1_000_000)


def cost_of(usage: RequestUsage, cost: ModelCost) -> Decimal:
    """What `usage` costs at `cost`'s prices, in US dollars.

    >>> from pydantic_ai.usage import RequestUsage
    >>> from holodeck.spec.models.model_settings import ModelCost
    >>> cost_of(RequestUsage(input_tokens=1000, output_tokens=500),
    ...         ModelCost(input_per_million=2, output_per_million=8))
    Decimal('0.006')
    """
    cached = min(usage.cache_read_tokens, usage.input_tokens)
    cached_rate = cost.cached_input_per_million
    if cached_rate is None:
        cached_rate = cost.input_per_million
    dollars = (
        (usage.input_tokens - cached) * cost.input_per_million
        + cached * cached_rate
        + usage.output_tokens * cost.output_per_million
    )
    return dollars / _MILLION


class PricedModel(BeforeRequestModel):
    """Sets each answer's `usage.cost` from the model's `cost:` block."""

    def __init__(self, wrapped: Any, cost: ModelCost) -> None:
        super().__init__(wrapped)
        self.cost = cost

    async def before_request(self) -> None:
        return None

    def after_response(self, response: ModelResponse) -> None:
        response.usage.cost = cost_of(response.usage, self.cost)
