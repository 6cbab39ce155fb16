"""What one conversation owns beyond its history: the servers its agents start for it
alone (MCP servers with `scope: session`), so one user's browser or shell never serves
another's. Made on first need and closed with the session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic_ai.toolsets import AbstractToolset

    from holodeck.runtime._agent import Agent


class SessionScope:
    __slots__ = ("__weakref__", "_owned", "session_id", "workspace")  # a2a keys by it

    def __init__(self, session_id: str | None = None, workspace: Path | None = None) -> None:
        self._owned: dict[int, tuple[Agent, list[AbstractToolset[Any]]]] | None = None
        self.session_id = session_id  # where a server keeps its workspace
        self.workspace = workspace  # the folder its workspace tools act in, when given

    def toolsets_for(self, agent: Agent) -> list[AbstractToolset[Any]]:
        """`agent`'s per-session toolsets in this conversation, made on first use."""
        if not agent.has_session_tools:
            return []
        owned = self._owned if self._owned is not None else {}
        self._owned = owned
        entry = owned.get(id(agent))
        if entry is None:  # the agent is kept with them so its id cannot be reused
            made = agent.session_toolsets(self.session_id, self.workspace)
            entry = owned[id(agent)] = (agent, made)
        return entry[1]

    async def aclose(self) -> None:
        """Stop what this conversation started (idempotent)."""
        owned, self._owned = self._owned, None
        if not owned:
            return
        closers = []
        for _, toolsets in owned.values():
            for toolset in toolsets:
                toolset.apply(lambda t: closers.append(t) if hasattr(t, "aclose") else None)
        await asyncio.gather(*(t.aclose() for t in closers), return_exceptions=True)
