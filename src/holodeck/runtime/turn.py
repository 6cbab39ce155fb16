"""Where the events of the running turn go. Tool wrappers and sub-agents find the
current turn through a context variable, so nested calls report into one stream."""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from dataclasses import dataclass, field

from holodeck.runtime.events import Event, ToolCallFinished


@dataclass
class Turn:
    queue: asyncio.Queue[Event]
    agent: str = ""  # "" for the top agent, "helper" or "helper/critic" for sub-agents
    parent_call_id: str | None = None
    calls: list[ToolCallFinished] = field(default_factory=list)

    def emit(self, event: Event) -> None:
        self.queue.put_nowait(event)

    def nested(self, agent: str, parent_call_id: str) -> Turn:
        """The turn of a sub-agent called from tool call `parent_call_id`."""
        path = f"{self.agent}/{agent}" if self.agent else agent
        return Turn(self.queue, path, parent_call_id)


CURRENT_TURN: ContextVar[Turn | None] = ContextVar("holodeck_turn", default=None)
