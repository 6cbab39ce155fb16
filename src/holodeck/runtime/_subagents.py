"""Sub-agents as tools: each listed agent becomes a tool that runs it, isolated (its own
model, tools and instructions), and returns its answer. Its events appear in the
parent's stream, nested under the calling tool call; its per-session servers belong to
the parent's session."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic_ai import FunctionToolset, RunContext, Tool

from holodeck.runtime._held import Held
from holodeck.runtime._hosting import Hosting
from holodeck.runtime._options import RunOptions
from holodeck.runtime._turn import CURRENT_TURN, RunningTurn
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.tools import AgentTool

if TYPE_CHECKING:
    from holodeck.runtime._agent import Agent

# builds a sub-agent: `Agent(spec, options, telemetry=...)`, passed in by the `Agent` that
# owns these tools, so that this module does not import the module that imports it
AgentFactory = Callable[..., "Agent"]


class SubagentToolset(Held, FunctionToolset[Any]):
    """The sub-agent tools; closing them (the parent agent closing) closes the sub-agents
    built so far."""

    def __init__(self) -> None:
        super().__init__()
        self.built: list[Agent] = []  # sub-agents, as they are first called

    async def aclose(self) -> None:
        for agent in self.built:
            await agent.aclose()


def subagent_toolset(
    spec: AgentSpec, options: RunOptions, hosting: Hosting, make_agent: AgentFactory
) -> SubagentToolset:
    """`options` and `hosting` as the parent has them: sub-agents keep its environment,
    settings and outbound policy. `make_agent` builds each sub-agent (the parent's class)."""
    described = {t.name: t.description for t in spec.tools if isinstance(t, AgentTool)}
    toolset = SubagentToolset()
    for name, sub in spec.subagents.items():
        toolset.add_tool(
            _tool(
                name,
                sub,
                described.get(name) or sub.description,
                options,
                hosting,
                toolset.built,
                make_agent,
            )
        )
    return toolset


def _tool(
    name: str,
    sub: AgentSpec,
    description: str | None,
    options: RunOptions,
    hosting: Hosting,
    registry: list[Agent],
    make_agent: AgentFactory,
) -> Tool[Any]:
    built: list[Agent] = []  # the sub-agent, built on first call

    async def delegate(ctx: RunContext[Any], task: str) -> str:
        parent = CURRENT_TURN.get()
        if not built:  # traced into the caller's telemetry: one trace for the whole turn
            telemetry = parent.telemetry if parent else None
            built.append(make_agent(sub, options, telemetry=telemetry, hosting=hosting))
            registry.append(built[0])
        turn = parent.nested(name, ctx.tool_call_id or name) if parent else RunningTurn.detached()
        final = await built[0].run_nested(task, turn, ctx.usage)
        return str(final.text)

    delegate.__doc__ = (
        f"{description or f'Delegate a task to the {name} agent.'}\n\n"
        f"Args:\n    task: What the {name} agent should do, with all the context it needs."
    )
    return Tool(delegate, name=name, takes_ctx=True)
