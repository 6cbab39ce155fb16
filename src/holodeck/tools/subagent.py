"""Sub-agents as tools: each listed agent becomes a tool that runs it, isolated (its own
model, tools and instructions), and returns its answer. Its events appear in the
parent's stream, nested under the calling tool call."""

from __future__ import annotations

from typing import Any

from pydantic_ai import RunContext, Tool

from holodeck.runtime.options import RunOptions
from holodeck.spec.agent_spec import AgentSpec
from holodeck.spec.tools import AgentTool


def subagent_tools(spec: AgentSpec, options: RunOptions) -> list[Tool[Any]]:
    described = {t.name: t.description for t in spec.tools if isinstance(t, AgentTool)}
    return [
        _tool(name, sub, described.get(name) or sub.description, options)
        for name, sub in spec.subagents.items()
    ]


def _tool(name: str, sub: AgentSpec, description: str | None, options: RunOptions) -> Tool[Any]:
    built: list[Any] = []  # the sub-agent, built on first call

    async def delegate(ctx: RunContext[Any], task: str) -> str:
        from holodeck.runtime.agent import Agent
        from holodeck.runtime.turn import CURRENT_TURN, Turn

        if not built:
            built.append(Agent(sub, options))
        parent = CURRENT_TURN.get()
        turn = parent.nested(name, ctx.tool_call_id or name) if parent else Turn(_discard())
        final = await built[0].run_nested(task, turn, ctx.usage)
        return str(final.text)

    delegate.__doc__ = (
        f"{description or f'Delegate a task to the {name} agent.'}\n\n"
        f"Args:\n    task: What the {name} agent should do, with all the context it needs."
    )
    return Tool(delegate, name=name, takes_ctx=True)


def _discard() -> Any:
    import asyncio

    return asyncio.Queue()
