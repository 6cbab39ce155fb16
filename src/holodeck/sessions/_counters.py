"""Counters that several turns draw on at once, such as what one API key used today: the
amounts used, and the holds of turns in progress. A turn takes a hold before it spends
(refused when a cap is reached; told to wait while others' holds leave it too little)
and settles it after, adding what it really used. The document is JSON; a store changes
it atomically (`SessionStore.update_counters`), so processes sharing the store share
the counters. A hold lapses after its lease: a process that died mid-turn frees it then.

    >>> doc, got = take_hold(None, {"requests": Decimal(4)}, {"requests": Decimal(3)}, 0.0, 60)
    >>> got.held
    {'requests': Decimal('3')}
    >>> doc, _ = settle_hold(doc, got.hold or "", {"requests": Decimal(2)}, 1.0)
    >>> used_of(doc)
    {'requests': Decimal('2')}
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

Amounts = dict[str, Decimal]


@dataclass(frozen=True)
class Taken:
    """What `take_hold` decided: a hold (its id and what it holds), a counter at its cap
    (`full`), or, with neither, to wait for the holds of other turns to settle."""

    hold: str | None = None
    held: Amounts = field(default_factory=dict)
    full: str | None = None
    used: Amounts = field(default_factory=dict)  # what was used (settled) before


def take_hold(
    data: bytes | None, caps: Amounts, wants: Amounts, now: float, lease_s: float
) -> tuple[bytes, Taken]:
    """Hold, for each counter of `caps`, the smaller of `wants` (a turn's most) and what
    is left under the cap. A turn is never given less than it would get alone: while the
    holds of others leave it less, it waits (`Taken()`) until they settle."""
    used, holds = _read(data, now)
    for name, cap in caps.items():
        if used.get(name, Decimal(0)) >= cap:
            return _write(used, holds), Taken(full=name, used=used)
    held_by_others: Amounts = {}
    for hold in holds.values():
        for name, amount in hold["amounts"].items():
            held_by_others[name] = held_by_others.get(name, Decimal(0)) + amount
    share: Amounts = {}
    for name, cap in caps.items():
        rest = cap - used.get(name, Decimal(0))
        share[name] = min(rest, wants[name]) if name in wants else rest
        if share[name] > rest - held_by_others.get(name, Decimal(0)):
            return _write(used, holds), Taken(used=used)
    hold_id = uuid.uuid4().hex
    holds[hold_id] = {"amounts": share, "expires": now + lease_s}
    return _write(used, holds), Taken(hold=hold_id, held=share, used=used)


def settle_hold(data: bytes | None, hold_id: str, spent: Amounts, now: float) -> tuple[bytes, None]:
    """Drop the hold `hold_id` (if it has not lapsed) and add what its turn spent."""
    used, holds = _read(data, now)
    holds.pop(hold_id, None)
    for name, amount in spent.items():
        used[name] = used.get(name, Decimal(0)) + amount
    return _write(used, holds), None


def used_of(data: bytes | None) -> Amounts:
    """What was used (settled holds only)."""
    return _read(data, float("-inf"))[0]


def _read(data: bytes | None, now: float) -> tuple[Amounts, dict[str, dict[str, Any]]]:
    raw = json.loads(data) if data else {}
    used = {name: Decimal(value) for name, value in raw.get("used", {}).items()}
    holds = {
        hold_id: {
            "amounts": {n: Decimal(v) for n, v in hold["amounts"].items()},
            "expires": float(hold["expires"]),
        }
        for hold_id, hold in raw.get("holds", {}).items()
        if float(hold["expires"]) > now  # a lapsed hold (its process died) counts no more
    }
    return used, holds


def _write(used: Amounts, holds: dict[str, dict[str, Any]]) -> bytes:
    def text(amounts: Amounts) -> dict[str, str]:
        return {name: str(value) for name, value in amounts.items()}

    return json.dumps(
        {
            "used": text(used),
            "holds": {
                hold_id: {"amounts": text(hold["amounts"]), "expires": hold["expires"]}
                for hold_id, hold in holds.items()
            },
        }
    ).encode()
