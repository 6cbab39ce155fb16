"""`ToolContext`: what building an agent's tools needs from the run that builds them.
The runtime makes it (`holodeck.runtime.tool_context`) and re-exports it
(`from holodeck.runtime import ToolContext`, where a reader of the runtime looks for it).
It is defined here, not in runtime/ or tools/, because tools/, search/ and llm/ itself
(`model_modalities`) read it and llm/ is the lowest layer they share; and what it carries
(the model override, cassette, rate limit, outbound policy) is what building a model needs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from holodeck.net import OutboundPolicy
from holodeck.spec.models.settings import Settings

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from holodeck.llm.cassette import Cassette
    from holodeck.llm.rate_limit import RateLimiter

# told how a search tool's ingestion goes: (tool name, phase, done, total)
IngestProgress = Callable[[str, str, int, int], None]


@dataclass(frozen=True)
class ToolContext:
    """Completed for one agent: its environment, settings and outbound policy."""

    env: Mapping[str, str]  # the agent's environment (process, .env)
    settings: Settings  # the agent's config.yaml settings
    outbound: OutboundPolicy  # where requests the model steers may go
    model: str | Model | None = None  # the run's model override (`--model`), if any
    # the run's record/replay and shared rate limit, for the models tools build themselves
    cassette: Cassette | None = None
    rate_limit: RateLimiter | None = None
    # the definition was uploaded: the endpoints it names are checked on every connection
    uploaded: bool = False
    lent: frozenset[str] | None = None  # an upload's borrowed provider entries
    progress: IngestProgress | None = None
