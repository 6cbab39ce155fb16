"""How a run differs from what the definition says: a model override, a cassette."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from holodeck.config.settings import Settings

if TYPE_CHECKING:
    from holodeck.llm.cassette import Cassette

DEFAULT_MAX_TOOL_ITERATIONS = 10


@dataclass(frozen=True)
class RunOptions:
    """`model` replaces every model the agent uses (its own, prompt tools', sub-agents'):
    `test` for the offline model, or `provider/name`."""

    model: str | None = None
    cassette: Cassette | None = None  # records or replays every model exchange
    env: Mapping[str, str] | None = None
    settings: Settings = field(default_factory=Settings)
    max_tool_iterations: int | None = None
