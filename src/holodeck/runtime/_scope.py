"""What one conversation owns beyond its history: the servers its agents start for it
alone (MCP servers with `scope: session`, a workspace and its terminals), so one user's
browser or shell never serves another's. Made on first need, entered as async context
managers (`Held`) and left when the session closes."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic_ai.toolsets import AbstractToolset

    from holodeck.runtime._agent import Agent

log = logging.getLogger("holodeck.runtime")


class SessionScope:
    __slots__ = ("__weakref__", "_owned", "session_id", "user", "workspace")  # a2a keys by it

    def __init__(self, session_id: str | None = None, workspace: Path | None = None) -> None:
        self._owned: dict[int, tuple[Agent, list[AbstractToolset[Any]]]] | None = None
        self.session_id = session_id  # where a server keeps its workspace
        self.workspace = workspace  # the folder its workspace tools act in, when given
        self.user: str | None = None  # whose long-term memories it reaches (None: local)

    async def toolsets_for(self, agent: Agent) -> list[AbstractToolset[Any]]:
        """`agent`'s per-session toolsets in this conversation, made and entered on first
        use; they stay entered until `aclose()`."""
        if not agent.has_session_tools:
            return []
        owned = self._owned if self._owned is not None else {}
        self._owned = owned
        entry = owned.get(id(agent))
        if entry is None:  # the agent is kept with them so its id cannot be reused
            made = agent.session_toolsets(self.session_id, self.workspace)
            entered: list[AbstractToolset[Any]] = []
            entry = owned[id(agent)] = (agent, entered)
            for toolset in made:
                await toolset.__aenter__()
                entered.append(toolset)
        return entry[1]

    async def aclose(self) -> None:
        """Stop what this conversation started (idempotent)."""
        owned, self._owned = self._owned, None
        if not owned:
            return
        toolsets = [t for _, made in owned.values() for t in made]
        results = await asyncio.gather(
            *(t.__aexit__(None, None, None) for t in toolsets), return_exceptions=True
        )
        for result in results:  # one that fails to stop must not keep the others running
            if isinstance(result, Exception):
                log.warning("a session's tool server did not stop cleanly: %s", result)
