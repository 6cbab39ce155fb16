"""`holodeck mcp serve`: agents as the tools of an MCP server on stdin/stdout, for a
desktop assistant that starts it. The same tools as /mcp; the conversations are this
process's (an in-memory store), kept while it runs. stdout carries only the protocol:
logs, and whatever a tool prints, go to stderr."""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Sequence
from typing import Any

from holodeck.errors import ConfigurationError, HoloDeckError
from holodeck.runtime import Agent, Hosting, Run, RunOptions
from holodeck.server._live_sessions import LiveSessions
from holodeck.server._turn_json import call_tree, jsonable, priced_usage_json
from holodeck.server.mcp._server import mcp_server
from holodeck.sessions import MemorySessionStore
from holodeck.spec.models.agent_spec import AgentSpec

LOCK_WAIT_S = 60.0  # a call on a conversation another call is answering waits this long


async def serve_mcp_stdio(specs: Sequence[AgentSpec], model: str | None = None) -> None:
    """Serve `specs` over stdio until the client closes stdin."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    names = [spec.name for spec in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigurationError(
            f"several agents are named {', '.join(twice)}",
            hint="each agent is a tool named as the agent: give them different names",
        )
    agents: dict[str, Agent] = {}
    store = MemorySessionStore()
    live = LiveSessions()
    offered = sorted((spec.name, spec.description) for spec in specs)

    async def ask(ctx: Any, name: str, question: str, session_id: str | None) -> dict[str, Any]:
        agent = agents[name]
        session_id = session_id or uuid.uuid4().hex
        async with live.turn(agent, store, f"{name}:{session_id}", session_id, LOCK_WAIT_S) as s:
            final = await s.answer(question, stream_text=False)  # the answer whole
            # as a served turn's: a turn that sent no request has no cost, not 0
            cost = s.spend.last_turn_cost if final.usage.requests else None
        return {
            "response": final.text,
            "output": jsonable(final.output),
            "session_id": session_id,
            "agent": name,
            "tool_calls": call_tree(final.tool_calls),
            "usage": priced_usage_json(final.usage, cost),
            "model": final.model or None,
            "request_id": uuid.uuid4().hex,
        }

    server = mcp_server(lambda ctx: offered, ask)
    try:
        await _serve(server, agents, specs, model, store, live)
    except BaseExceptionGroup as group:  # the SDK's task groups wrap what failed
        raise _holodeck_error_in(group) or group from None


def _holodeck_error_in(group: BaseExceptionGroup[BaseException]) -> HoloDeckError | None:
    """The first HoloDeck error of `group` (nested groups too): it says what to fix."""
    found: BaseException | None = group.subgroup(HoloDeckError)
    while isinstance(found, BaseExceptionGroup):
        found = found.exceptions[0] if found.exceptions else None
    return found if isinstance(found, HoloDeckError) else None


async def _serve(
    server: Any,
    agents: dict[str, Agent],
    specs: Sequence[AgentSpec],
    model: str | None,
    store: MemorySessionStore,
    live: LiveSessions,
) -> None:
    from mcp.server.stdio import stdio_server

    # the SDK points fd 1 at stderr while it serves: what the agents' tools print, from
    # their first import on, stays off the protocol's stream
    async with stdio_server() as (read, write):
        # the agents answer an MCP client, not the person at this terminal: served mode
        hosting = Hosting(served=True)
        agents.update(
            (spec.name, Agent(spec, RunOptions(model=model), hosting=hosting)) for spec in specs
        )
        async with Run(*agents.values()), store:
            try:
                for agent in agents.values():
                    await agent.start()
                await server.run(read, write, server.create_initialization_options())
            finally:
                await live.aclose()
