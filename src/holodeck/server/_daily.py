"""What each API key has used today, for an agent's `limits.key_daily` caps, kept in the
agent's session store: every process sharing the store (workers, replicas) counts
against one cap, and a restart keeps the day's count (the memory store excepted).

A turn holds its share of what is left before it spends: for each capped amount, the
most the turn could use (its own caps, its tool-iteration limit), or else all that is
left. Turns whose shares fit run side by side; a turn whose share others' holds would
cut waits for them to settle, so it gets what it would get alone. Settling adds what the
turn really used, on every way out of it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from holodeck.errors import BusyError
from holodeck.runtime import Used, cap_reached
from holodeck.sessions import SessionStore, settle_hold, take_hold
from holodeck.spec.models.controls import Caps, Limits

HOLD_LEASE_S = 600.0  # a hold outlives a process that died mid-turn by at most this
_KEEP_S = 2 * 86400.0  # a day's counters are kept past its end, then dropped
_POLL_S = (0.005, 0.2)  # first and longest pause while others' holds are settling

_FIELDS = {  # our counter -> its cap
    "cost": "max_cost_usd",
    "tokens": "max_tokens",
    "requests": "max_requests",
    "tool_calls": "max_tool_calls",
}


def _caps(caps: Caps) -> dict[str, Decimal]:
    given = {name: getattr(caps, cap) for name, cap in _FIELDS.items()}
    return {name: Decimal(value) for name, value in given.items() if value is not None}


def _as_used(amounts: dict[str, Decimal]) -> Used:
    return Used(
        amounts.get("cost", Decimal(0)),
        int(amounts.get("tokens", 0)),
        int(amounts.get("requests", 0)),
        int(amounts.get("tool_calls", 0)),
    )


@dataclass
class KeyHold:
    """A turn's hold on its key's day: `used` is what the turn's limits take as used, so
    that what is left for it is exactly its share."""

    store: SessionStore
    key: str
    hold: str
    used: Used

    async def settle(self, spent: Used) -> None:
        """Give the hold back and count what the turn spent (a cost that cannot be priced
        counts nothing: the cost cap of such a model is not enforced)."""
        amounts = {
            "cost": spent.cost if spent.cost is not None else Decimal(0),
            "tokens": Decimal(spent.tokens),
            "requests": Decimal(spent.requests),
            "tool_calls": Decimal(spent.tool_calls),
        }
        store = self.store
        await store.update_counters(
            self.key,
            lambda data: settle_hold(data, self.hold, amounts, store.clock()),
            keep_s=_KEEP_S,
        )


def turn_most(limits: Limits, session_used: Used, turn_requests: int) -> dict[str, Decimal]:
    """The most one turn can use of each amount: its own caps, what is left of its
    session's, and (requests) its tool-iteration limit; an amount absent has no bound."""
    most: dict[str, Decimal] = {"requests": Decimal(turn_requests)}
    if limits.turn is not None:
        for name, value in _caps(limits.turn).items():
            most[name] = min(most.get(name, value), value)
    if limits.session is not None:
        for name, cap in _caps(limits.session).items():
            so_far = session_used.of(_FIELDS[name])
            if so_far is not None:
                rest = max(cap - so_far, Decimal(0))
                most[name] = min(most.get(name, rest), rest)
    return most


async def hold_key_day(
    store: SessionStore,
    agent: str,
    owner: str | None,
    caps: Caps,
    most: dict[str, Decimal],
    wait_s: float,
) -> KeyHold:
    """Hold a turn's share of key `owner`'s day under `caps` (at most `most` of each
    amount). Raises `LimitReached` when a cap is reached, and `BusyError` when others'
    holds do not settle within `wait_s`."""
    day = datetime.now(UTC).date().isoformat()
    key = f"key-day:{agent}:{day}:{owner or ''}"
    limits = _caps(caps)
    want = {name: value for name, value in most.items() if value > 0}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    pause = _POLL_S[0]
    while True:
        taken = await store.update_counters(
            key,
            lambda data: take_hold(data, limits, want, store.clock(), HOLD_LEASE_S),
            keep_s=_KEEP_S,
        )
        if taken.full is not None:
            cap = _FIELDS[taken.full]
            so_far = taken.used.get(taken.full, Decimal(0))
            raise cap_reached("key_daily", cap, so_far, limits[taken.full])
        if taken.hold is not None:
            # what the turn's limits see as used: the cap less its share
            used = {name: limits[name] - share for name, share in taken.held.items()}
            return KeyHold(store, key, taken.hold, _as_used(used))
        if loop.time() + pause > deadline:
            raise BusyError(
                "turns in progress hold what is left of this API key's daily caps",
                hint="try again in a moment; the caps are in the agent's limits.key_daily",
            )
        await asyncio.sleep(pause)  # another turn holds the rest: wait for it to settle
        pause = min(pause * 2, _POLL_S[1])
