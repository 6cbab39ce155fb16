"""What each API key has used today, for an agent's `limits.key_daily` caps: counted by
this server process, from the turns it served, and forgotten when the UTC day turns.
(Several processes each count their own share: a cap is per process, not per fleet.)"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from holodeck.runtime import Used


@dataclass
class DailySpend:
    """Per API key name (None: a server without keys), what today's turns used."""

    _day: date = field(default_factory=lambda: datetime.now(UTC).date())
    _used: dict[str | None, Used] = field(default_factory=dict)

    def used(self, key: str | None) -> Used:
        self._turn_day()
        return self._used.get(key, Used())

    def add(self, key: str | None, used: Used) -> None:
        self._turn_day()
        self._used[key] = self._used.get(key, Used()) + used

    def _turn_day(self) -> None:
        today = datetime.now(UTC).date()
        if today != self._day:
            self._day, self._used = today, {}
