"""What a conversation has used: tokens, model requests and, when every request can be
priced (from the model's `cost:` block or the price list bundled with pydantic-ai), its
cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pydantic_ai.messages import ModelResponse

from holodeck.runtime._events import Usage
from holodeck.runtime._limits import Used

_MOST_WAITING = 32  # turns waiting to be priced before they are priced anyway


@dataclass
class Spend:
    """Tokens used so far and, when every request could be priced, what they cost.

    Turns are priced when a cost is first asked for, not as they finish: a test run,
    which never asks, does not pay for the price lookups."""

    usage: Usage = field(default_factory=Usage)
    priced: Decimal | None = Decimal(0)  # the turns priced so far; None: unknown
    unpriced: str | None = None  # why the cost is unknown
    cancelled: int = 0  # turns interrupted before their answer (not counted)
    tool_calls: int = 0
    _waiting: list[tuple[Usage, Sequence[ModelResponse]]] = field(default_factory=list, repr=False)
    _last: Decimal | None = field(default=None, repr=False)

    def add(self, usage: Usage, responses: Sequence[ModelResponse], tool_calls: int = 0) -> None:
        """Count a finished turn (its model responses are priced when asked)."""
        self.usage = self.usage + usage
        self.tool_calls += tool_calls
        self._waiting.append((usage, responses))
        if len(self._waiting) >= _MOST_WAITING:  # a long conversation keeps no backlog
            self._price_waiting()

    def add_stopped(self, usage: Usage, cost: Decimal | None, tool_calls: int) -> None:
        """Count a turn a cap stopped: nothing of it is kept, but what it used was spent."""
        self._price_waiting()
        self.usage = self.usage + usage
        self.tool_calls += tool_calls
        if cost is None and usage.requests:
            self.priced, self.unpriced = None, self.unpriced or "a stopped turn had no price"
        elif self.priced is not None and cost is not None:
            self.priced += cost

    def used(self) -> Used:
        """What the caps count of this spend."""
        return Used(self.cost, self.usage.total_tokens, self.usage.requests, self.tool_calls)

    @property
    def cost(self) -> Decimal | None:
        """The cost so far, or None when some request cannot be priced."""
        self._price_waiting()
        return self.priced

    @property
    def last_turn_cost(self) -> Decimal | None:
        """The cost of the last turn counted, or None when it cannot be priced."""
        self._price_waiting()
        return self._last

    def _price_waiting(self) -> None:
        for usage, responses in self._waiting:
            cost, why = price(responses, usage)
            self._last = cost
            if cost is None:
                self.priced, self.unpriced = None, self.unpriced or why
            elif self.priced is not None:
                self.priced += cost
        self._waiting.clear()

    def report(self) -> list[str]:
        u = self.usage
        lines = [
            f"tokens: {u.total_tokens} ({u.input_tokens} in, {u.output_tokens} out) "
            f"in {u.requests} model request{'s' if u.requests != 1 else ''}"
        ]
        if u.requests == 0:
            lines.append("cost: nothing yet")
        elif self.cost is None:
            lines.append(f"cost: unknown ({self.unpriced})")
        else:
            lines.append(f"cost: ${self.cost:.6f} (estimated from the model's prices)")
        if self.cancelled:
            lines.append(f"not counted: {self.cancelled} cancelled answer(s)")
        return lines

    def to_dict(self) -> dict[str, Any]:
        u = self.usage
        return {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "requests": u.requests,
            "cost": None if self.cost is None else str(self.cost),
            "unpriced": self.unpriced,
            "cancelled": self.cancelled,
            "tool_calls": self.tool_calls,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Spend:
        usage = Usage(
            int(data.get("input_tokens", 0)),
            int(data.get("output_tokens", 0)),
            int(data.get("requests", 0)),
        )
        cost = data.get("cost")
        return cls(
            usage,
            None if cost is None else Decimal(str(cost)),
            data.get("unpriced"),
            int(data.get("cancelled", 0)),
            int(data.get("tool_calls", 0)),
        )


def price(responses: Sequence[ModelResponse], usage: Usage) -> tuple[Decimal | None, str]:
    """The cost of a turn's model responses, or None and why it is unknown."""
    if len(responses) < usage.requests:
        return None, "sub-agents and prompt tools made requests that cannot be priced here"
    total = Decimal(0)
    for response in responses:
        if response.usage.cost is not None:  # a `cost:` block's price, or pydantic-ai's
            total += response.usage.cost
            continue
        try:
            total += response.cost().total_price
        except (LookupError, ValueError, AssertionError):
            return None, f"no price data for {response.model_name or 'the model'}"
    return total, ""
