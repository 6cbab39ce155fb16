"""`Hosting`: what the surface running an agent wires in, beside the user's `RunOptions`:
how far the definition is trusted and what it may reach, and the callbacks the surface
listens with. The CLI, the test runner and the server set it; code embedding HoloDeck
needs none of it (the defaults are an operator's own definition, heard by nobody)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from holodeck.llm.tool_context import IngestProgress, ToolContext
from holodeck.net import OutboundPolicy, policy_for

if TYPE_CHECKING:
    from holodeck.runtime._options import RunOptions
    from holodeck.spec.models.agent_spec import AgentSpec


@dataclass(frozen=True)
class Hosting:
    """`Agent(spec, options, hosting=Hosting(uploaded=True))`: how the surface hosts it."""

    # told how search tools' ingestion goes: (tool name, phase, done, total)
    progress: IngestProgress | None = None
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
    # the agent answers others over a server (`create_app`, `holodeck mcp serve`) rather
    # than the person at this machine: the Claude harness's shell and file tools are off
    # unless `deployment.harness_tools` allows them
    served: bool = False
    # a server: each session's workspace tools act in a folder of its own here,
    # `<workspaces>/<session id>`, kept as long as the session is (`memory.ttl_seconds`)
    workspaces: Path | None = None

    def for_agent(self, spec: AgentSpec) -> Hosting:
        """This hosting with the outbound policy the agent at `spec` gets."""
        if self.outbound is not None:
            return self
        policy = policy_for(spec, uploaded=self.uploaded, allow_loopback=self.allow_loopback)
        return replace(self, outbound=policy)

    @property
    def lent(self) -> frozenset[str] | None:
        """None for a definition the operator wrote; for an uploaded one, the provider
        entries it may use the server's credentials of."""
        return frozenset(self.upload_providers) if self.uploaded else None


def tool_context(
    spec: AgentSpec, options: RunOptions, hosting: Hosting | None = None
) -> ToolContext:
    """What the agent's tools get from the run: `options` and `hosting` completed for
    `spec` (its environment, settings and outbound policy)."""
    hosting = (hosting or Hosting()).for_agent(spec)
    options = options.for_agent(spec, uploaded=hosting.uploaded)
    assert options.env is not None and options.settings is not None
    assert hosting.outbound is not None
    return ToolContext(
        env=options.env,
        settings=options.settings,
        outbound=hosting.outbound,
        model=options.model,
        cassette=options.cassette,
        rate_limit=options.rate_limit,
        uploaded=hosting.uploaded,
        lent=hosting.lent,
        progress=hosting.progress,
    )
