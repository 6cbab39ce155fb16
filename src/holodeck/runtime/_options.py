"""`RunOptions`: how a run differs from what the definition says (a model override, a
cassette, limits). What a user sets; what the surfaces wire in is `Hosting`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from holodeck.config.env_vars import environment_for
from holodeck.config.settings import load_settings
from holodeck.llm.offline_script import OfflineScript
from holodeck.spec.models.settings import Settings

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from holodeck.llm.cassette import Cassette
    from holodeck.llm.rate_limit import RateLimiter
    from holodeck.spec.models.agent_spec import AgentSpec

DEFAULT_MAX_TOOL_ITERATIONS = 10
# a documented switch a user may set; HoloDeck reads it and never writes it
HARNESS_ENV = "HOLODECK_HARNESS"


@dataclass(frozen=True)
class RunOptions:
    """`model` replaces every model the agent uses (its own, prompt tools', sub-agents'):
    `test` for the offline model, `provider/name`, or a pydantic-ai model object
    (for embedding HoloDeck, and for benchmarks with scripted models)."""

    model: str | Model | None = None
    cassette: Cassette | None = None  # records or replays every model exchange
    # None: the process environment plus the agent's .env, and the agent's config.yaml
    # files (project, then ~/.holodeck); filled in by `for_agent`
    env: Mapping[str, str] | None = None
    settings: Settings | None = None
    max_tool_iterations: int | None = None
    rate_limit: RateLimiter | None = None  # shared by every model of the run
    # "none" (`--harness none`): agents that ask for a harness run in HoloDeck's own loop
    harness: Literal["none"] | None = None
    # what the code running a turn tells the offline model (the tools a test case expects,
    # a simulated user's lines) and the hook hearing a turn's first request
    offline: OfflineScript = field(default_factory=OfflineScript)

    @property
    def own_loop(self) -> bool:
        """The run says `--harness none`: by this field, or by HOLODECK_HARNESS=none in
        the environment it reads."""
        return self.harness == "none" or (self.env or {}).get(HARNESS_ENV) == "none"

    def for_agent(self, spec: AgentSpec, *, uploaded: bool = False) -> RunOptions:
        """These options with the environment and settings the agent at `spec` sees.
        `uploaded`: the definition came to a server, and its own .env is no source of
        the server's settings or credentials."""
        if self.env is not None and self.settings is not None:
            return self

        env = self.env
        if env is None:
            env = dict(os.environ) if uploaded else environment_for(spec.root)
        settings = self.settings
        if settings is None:
            project = spec.root if spec.format == "agent.yaml" else None
            settings = load_settings(project, env).settings
        return replace(self, env=env, settings=settings)
