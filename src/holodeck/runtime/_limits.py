"""Spend caps (`limits:`) as the usage limits of one turn: the turn's own caps, and what
is left of the session's (and of the API key's day, which the server passes in). The
tightest of each kind binds; pydantic-ai's `UsageLimits` enforces it during the run, and
a turn the caps stop becomes `LimitReached`, naming the cap."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from pydantic_ai import UsageLimits
from pydantic_ai.exceptions import UsageLimitExceeded

from holodeck.errors import LimitReached
from holodeck.spec.models.controls import Caps, Limits

log = logging.getLogger("holodeck.runtime")

# our cap -> pydantic-ai's limit of the same thing
_LIMIT_OF = {
    "max_cost_usd": "cost_limit",
    "max_tokens": "total_tokens_limit",
    "max_requests": "request_limit",
    "max_tool_calls": "tool_calls_limit",
}
_WHAT = {
    "max_cost_usd": "cost",
    "max_tokens": "tokens",
    "max_requests": "model requests",
    "max_tool_calls": "tool calls",
}


@dataclass(frozen=True)
class Used:
    """What a session (or an API key's day) has used so far, as the caps count it."""

    cost: Decimal | None = Decimal(0)
    tokens: int = 0
    requests: int = 0
    tool_calls: int = 0

    def __add__(self, other: Used) -> Used:
        cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        return Used(
            cost,
            self.tokens + other.tokens,
            self.requests + other.requests,
            self.tool_calls + other.tool_calls,
        )

    def __sub__(self, other: Used) -> Used:
        cost = None if self.cost is None or other.cost is None else self.cost - other.cost
        return Used(
            cost,
            self.tokens - other.tokens,
            self.requests - other.requests,
            self.tool_calls - other.tool_calls,
        )

    def of(self, cap: str) -> Decimal | int | None:
        return {
            "max_cost_usd": self.cost,
            "max_tokens": self.tokens,
            "max_requests": self.requests,
            "max_tool_calls": self.tool_calls,
        }[cap]


@dataclass(frozen=True)
class TurnLimits:
    """The `UsageLimits` of one turn, and which cap each binding limit comes from."""

    usage_limits: UsageLimits
    binding: Mapping[str, str]  # pydantic-ai limit name -> `limits.<scope>.<cap>`

    def reached(self, exc: UsageLimitExceeded) -> LimitReached | None:
        """The cap `exc` reports, or None when it is the tool-iteration limit."""
        text = str(exc)
        for limit, cap in self.binding.items():
            if limit in text:
                return LimitReached(
                    f"the turn stopped: it reached {cap}",
                    cap=cap,
                    hint=_hint(cap),
                )
        return None


def turn_limits(
    limits: Limits | None,
    iteration_requests: int,
    used: Mapping[str, Used] | None = None,
) -> TurnLimits:
    """The limits of a turn allowed `iteration_requests` model requests by the agent's
    tool-iteration limit. `used` holds, for "session" and "key_daily", what each has used
    so far; a scope already at one of its caps raises `LimitReached` before the turn."""
    scopes: list[tuple[str, Caps, Used]] = []
    if limits is not None:
        if limits.turn is not None:
            scopes.append(("turn", limits.turn, Used()))
        for scope in ("session", "key_daily"):
            caps = getattr(limits, scope)
            if caps is not None and used is not None and scope in used:
                scopes.append((scope, caps, used[scope]))
    values: dict[str, Decimal | int] = {"request_limit": iteration_requests}
    binding: dict[str, str] = {}
    for scope, caps, spent in scopes:
        for cap, ceiling in _caps_of(caps).items():
            so_far = spent.of(cap)
            if so_far is None:  # a run's --model with no price (validate checks the agent's)
                _warn_unpriced(f"limits.{scope}.{cap}")
                continue
            left = ceiling - so_far
            if left <= 0:
                raise cap_reached(scope, cap, so_far, ceiling)
            limit = _LIMIT_OF[cap]
            if limit not in values or left < values[limit]:
                values[limit] = left
                binding[limit] = f"limits.{scope}.{cap}"
    usage_limits = UsageLimits(
        request_limit=int(values["request_limit"]),
        cost_limit=Decimal(values["cost_limit"]) if "cost_limit" in values else None,
        total_tokens_limit=_int(values.get("total_tokens_limit")),
        tool_calls_limit=_int(values.get("tool_calls_limit")),
    )
    return TurnLimits(usage_limits, binding)


def cap_reached(
    scope: str, cap: str, so_far: Decimal | int, ceiling: Decimal | int
) -> LimitReached:
    """The error of a turn refused because `scope` ("session", "key_daily") has used
    `so_far` of its `cap` (e.g. "max_requests"), whose ceiling is `ceiling`."""
    return LimitReached(
        f"{_whose(scope)} has reached limits.{scope}.{cap} "
        f"({_amount(cap, so_far)} of {_amount(cap, ceiling)} {_WHAT[cap]} used)",
        cap=f"limits.{scope}.{cap}",
        hint=_hint(f"limits.{scope}.{cap}"),
    )


_warned: set[str] = set()


def _warn_unpriced(cap: str) -> None:
    """Once per cap and process: the model this run uses has no price, so `cap` cannot
    be enforced (the definition's own model was checked when it loaded)."""
    if cap not in _warned:
        _warned.add(cap)
        log.warning("%s is not enforced: this run's model has no known price", cap)


def _caps_of(caps: Caps) -> dict[str, Decimal | int]:
    given = {
        "max_cost_usd": caps.max_cost_usd,
        "max_tokens": caps.max_tokens,
        "max_requests": caps.max_requests,
        "max_tool_calls": caps.max_tool_calls,
    }
    return {name: value for name, value in given.items() if value is not None}


def _int(value: Decimal | int | None) -> int | None:
    return None if value is None else int(value)


def _whose(scope: str) -> str:
    return {"session": "this session", "key_daily": "this API key, today,"}.get(scope, "the turn")


def _amount(cap: str, value: Decimal | int) -> str:
    if cap != "max_cost_usd":
        return str(int(value))  # counts kept as decimals in a shared store read as whole
    return f"${value}"


def _hint(cap: str) -> str:
    if cap.startswith("limits.session"):
        return f"start a new session, or raise {cap}"
    if cap.startswith("limits.key_daily"):
        return f"wait for the next UTC day, or raise {cap}"
    return f"raise {cap} if the task needs more"
