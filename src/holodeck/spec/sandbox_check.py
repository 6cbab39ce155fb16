"""Which agents of a definition run the model's commands without a sandbox
(`sandbox: {type: none}`): `holodeck deploy` serves them only when acknowledged, and a
server refuses them as uploads."""

from __future__ import annotations

from collections.abc import Iterator

from holodeck.spec.models.agent_spec import AgentSpec


def unwalled(spec: AgentSpec, *, acknowledged: bool = True) -> list[str]:
    """Names of `spec` and its sub-agents whose commands run with `sandbox: {type: none}`;
    with `acknowledged=False`, only those that did not say `i_understand_this_is_unsafe`."""
    return [
        agent.name
        for agent in _agents(spec)
        if agent.workspace is not None
        and agent.workspace.sandbox.type == "none"
        and (acknowledged or not agent.workspace.sandbox.i_understand_this_is_unsafe)
    ]


def _agents(spec: AgentSpec) -> Iterator[AgentSpec]:
    yield spec
    for sub in spec.subagents.values():
        yield from _agents(sub)
