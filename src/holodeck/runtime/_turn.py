"""Where the events of the running turn go. Tool wrappers and sub-agents find the
current turn through a context variable, so nested calls report into one stream."""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from holodeck.runtime._events import Event, ToolCallFinished, ToolCallStarted


@dataclass
class RunningTurn:
    queue: asyncio.Queue[Event]
    agent: str = ""  # "" for the top agent, "helper" or "helper/critic" for sub-agents
    parent_call_id: str | None = None
    scope: SessionScope | None = None  # the conversation's own resources
    stream_text: bool = True  # TextDelta events wanted (else whole model responses)
    telemetry: Telemetry | None = None  # the top agent's: sub-agents trace into it too
    # Each model numbers its own calls, so a sub-agent's ids may repeat its parent's:
    # its events' ids start with the path of calls that led to it ("call_1/call_1").
    prefix: str = ""
    started: list[str] = field(default_factory=list)  # call ids, in the order made
    finished: dict[str, ToolCallFinished] = field(default_factory=dict)
    # the calls started and not finished, sub-agents' too (one dict shared by the nested
    # turns): what an interrupted turn reports as cancelled, seen by its reader or not
    running: dict[str, ToolCallStarted] = field(default_factory=dict)
    # tools the client runs (an AG-UI page's): offered to the top agent only
    client_tools: tuple[ClientTool, ...] = ()
    # the turn's own model settings and answer shape (the top agent's only)
    settings: TurnSettings | None = None
    # the session's spend, which model calls made beside the agent's run (long-term
    # memory's extraction) add to (the top agent's only; None outside a session)
    spend: Spend | None = None

    @property
    def calls(self) -> list[ToolCallFinished]:
        """The finished calls in the order the model made them (not the order they ended,
        which varies when calls run at once)."""
        return [self.finished[i] for i in self.started if i in self.finished]

    @classmethod
    def detached(cls) -> RunningTurn:
        """A turn whose events nobody reads (a sub-agent called outside any turn)."""
        return cls(asyncio.Queue())

    def emit(self, event: Event) -> None:
        self.queue.put_nowait(event)

    def nested(self, agent: str, parent_call_id: str) -> RunningTurn:
        """The turn of a sub-agent called from tool call `parent_call_id`."""
        path = f"{self.agent}/{agent}" if self.agent else agent
        parent = self.prefix + parent_call_id
        return RunningTurn(
            self.queue,
            path,
            parent,
            self.scope,
            self.stream_text,
            self.telemetry,
            prefix=parent + "/",
            running=self.running,
        )


if TYPE_CHECKING:
    from holodeck.observability import Telemetry
    from holodeck.runtime._client_tools import ClientTool
    from holodeck.runtime._scope import SessionScope
    from holodeck.runtime._spend import Spend
    from holodeck.runtime._turn_settings import TurnSettings

CURRENT_TURN: ContextVar[RunningTurn | None] = ContextVar("holodeck_turn", default=None)


class TurnObserver:
    """Reports tool calls into the current turn's stream (tools know nothing of turns)."""

    def caller(self) -> str:
        turn = CURRENT_TURN.get()
        return turn.agent if turn else ""

    def started(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        turn = CURRENT_TURN.get()
        if turn is not None:
            call_id = turn.prefix + call_id
            turn.started.append(call_id)
            event = ToolCallStarted(call_id, name, args, turn.agent, turn.parent_call_id)
            turn.running[call_id] = event
            turn.emit(event)

    def finished(
        self,
        call_id: str,
        name: str,
        args: dict[str, Any],
        result: Any,
        error: str | None,
        duration_ms: float,
    ) -> None:
        turn = CURRENT_TURN.get()
        if turn is not None:
            call_id = turn.prefix + call_id
            event = ToolCallFinished(
                call_id, name, args, result, error, duration_ms, turn.agent, turn.parent_call_id
            )
            turn.finished[call_id] = event
            turn.running.pop(call_id, None)
            turn.emit(event)
            if error is not None and turn.telemetry is not None:
                _mark_failed(error)


def _mark_failed(error: str) -> None:
    """Mark the current tool span failed: the model got "" and the turn went on, but a
    trace should show the failure (pydantic-ai sees a successful call)."""
    from opentelemetry import trace

    span = trace.get_current_span()
    span.set_status(trace.Status(trace.StatusCode.ERROR, error))
    span.set_attribute("error.type", error.split(":", 1)[0])


TURN_OBSERVER = TurnObserver()
