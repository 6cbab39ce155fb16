"""How a run differs from what the definition says: a model override, a cassette."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from holodeck.config.env_vars import environment_for
from holodeck.config.settings import load_settings
from holodeck.net import OutboundPolicy, policy_for
from holodeck.spec.settings_models import Settings

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from holodeck.llm.cassette import Cassette
    from holodeck.llm.rate_limit import RateLimiter
    from holodeck.spec.agent_spec import AgentSpec

DEFAULT_MAX_TOOL_ITERATIONS = 10


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
    # told how search tools' ingestion goes: (tool name, phase, done, total)
    progress: Callable[[str, str, int, int], None] | None = None
    # the agent's model calls `llm.first_request.on_first_request` callbacks (holodeck test)
    signals_first_request: bool = False
    # the definition was uploaded to a server, not written by its operator: the endpoints,
    # URLs and credentials it names get no trust of their own (outbound policy, credentials)
    uploaded: bool = False
    # the server's provider entries an uploaded agent may use the credentials of
    # (deployment.uploads.providers), at those entries' endpoints only
    upload_providers: tuple[str, ...] = ()
    # `holodeck chat --allow-loopback`: what the model steers may reach this machine
    allow_loopback: bool = False
    # where requests the model or an upload steers may go; None: from the agent's
    # `network` rules (filled in by `for_agent`, so sub-agents keep their parent's)
    outbound: OutboundPolicy | None = None

    def for_agent(self, spec: AgentSpec) -> RunOptions:
        """These options with the environment, settings and outbound policy the agent at
        `spec` sees."""
        options = self
        if options.outbound is None:
            policy = policy_for(spec, uploaded=self.uploaded, allow_loopback=self.allow_loopback)
            options = replace(options, outbound=policy)
        if options.env is not None and options.settings is not None:
            return options

        env = options.env
        if env is None:
            # an upload's own .env is no source of the server's settings or credentials
            env = dict(os.environ) if self.uploaded else environment_for(spec.root)
        settings = options.settings
        if settings is None:
            project = spec.root if spec.format == "agent.yaml" else None
            settings = load_settings(project, env).settings
        return replace(options, env=env, settings=settings)

    @property
    def lent(self) -> frozenset[str] | None:
        """None for a definition the operator wrote; for an uploaded one, the provider
        entries it may use the server's credentials of."""
        return frozenset(self.upload_providers) if self.uploaded else None
