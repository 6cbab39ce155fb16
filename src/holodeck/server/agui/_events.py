"""A turn's runtime events as AG-UI events (the `ag-ui-protocol` types): RUN_STARTED,
the answer as TEXT_MESSAGE_START/CONTENT/END, each tool call as TOOL_CALL_START/ARGS/END
then TOOL_CALL_RESULT, a STATE_SNAPSHOT of the conversation (session, usage, model),
and RUN_FINISHED, or RUN_ERROR. A text message is closed before a tool call starts, and
a new one opened for the text after it, so each message is one contiguous stream.
A call of one of the page's tools is TOOL_CALL_START/ARGS/END with no result: the run
ends there, and the page runs it. So is a call waiting for a person's approval, and the
run's RUN_FINISHED then carries an interrupt for it (`_interrupts`). The run that
resumes a call the page was shown does not start it again: its TOOL_CALL_RESULT follows.

Text a sub-agent writes is its answer to the tool call that asked it, which arrives as
that call's result: only the top agent's text is the assistant's message. For an agent
with `handoffs:`, its `name` is the agent answering the session: the served agent, or the
one a handoff passed the conversation to. AG-UI has no event of its own for a handoff or
for the history being compacted, so each is a CUSTOM event (`holodeck.handoff`,
`holodeck.history_compacted`) whose value is what /v1/chat's `handoff` and `compacted`
events carry."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from holodeck.runtime import (
    ApprovalRequired,
    Event,
    FinalMessage,
    HandedOff,
    HistoryCompacted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from holodeck.server._turn_json import compacted_json, handoff_json, jsonable
from holodeck.server.agui._interrupts import interrupts_of
from holodeck.server.agui._state import SERVERS_KEYS

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent


def _id() -> str:
    return uuid.uuid4().hex


class AguiRun:
    """The AG-UI events of one run (a turn) of thread `thread_id`."""

    def __init__(
        self,
        thread_id: str,
        run_id: str,
        shown: frozenset[str] = frozenset(),
        answering: str | None = None,
    ) -> None:
        self.thread_id, self.run_id = thread_id, run_id
        self._answering = answering  # the agent whose text the messages are
        self._shown = shown  # calls an earlier run of the thread started, resumed now
        self._message: str | None = None  # the text message open now
        self._wrote = False  # some answer text was sent

    def started(self) -> BaseEvent:
        from ag_ui.core import RunStartedEvent

        return RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id)

    def events_of(self, event: Event) -> list[BaseEvent]:
        if isinstance(event, TextDelta):
            return self._text(event.text) if not event.agent and event.text else []
        if isinstance(event, ToolCallStarted):
            return [] if event.call_id in self._shown else self._call_started(event)
        if isinstance(event, ApprovalRequired) and not event.agent:
            return self._call_started(ToolCallStarted(event.call_id, event.name, event.args))
        if isinstance(event, ToolCallFinished):
            return [self._call_finished(event)]
        if isinstance(event, FinalMessage) and not self._wrote and event.text:
            return self._text(event.text)  # an answer that did not stream (structured)
        if isinstance(event, HandedOff):  # the next text is another agent's message
            self._answering = event.to_agent
            return [*self._close_text(), _custom("holodeck.handoff", handoff_json(event))]
        if isinstance(event, HistoryCompacted):
            return [_custom("holodeck.history_compacted", compacted_json(event))]
        return []

    def finished(
        self, state: dict[str, Any], result: Any, pending: tuple[ApprovalRequired, ...] = ()
    ) -> list[BaseEvent]:
        """The run's end; `pending`: the calls the turn is paused on."""
        from ag_ui.core import RunFinishedEvent, RunFinishedInterruptOutcome, StateSnapshotEvent

        interrupts = interrupts_of(pending)
        outcome = RunFinishedInterruptOutcome(interrupts=interrupts) if interrupts else None
        return [
            *self._close_text(),
            StateSnapshotEvent(snapshot=state),
            RunFinishedEvent(
                thread_id=self.thread_id, run_id=self.run_id, result=result, outcome=outcome
            ),
        ]

    def failed(self, kind: str, message: str) -> list[BaseEvent]:
        from ag_ui.core import RunErrorEvent

        return [*self._close_text(), RunErrorEvent(message=message, code=kind)]

    # -- the pieces

    def _text(self, text: str) -> list[BaseEvent]:
        from ag_ui.core import TextMessageContentEvent, TextMessageStartEvent

        out: list[BaseEvent] = []
        if self._message is None:
            self._message = _id()
            out.append(
                TextMessageStartEvent(
                    message_id=self._message, role="assistant", name=self._answering
                )
            )
        out.append(TextMessageContentEvent(message_id=self._message, delta=text))
        self._wrote = True
        return out

    def _close_text(self) -> list[BaseEvent]:
        from ag_ui.core import TextMessageEndEvent

        if self._message is None:
            return []
        message, self._message = self._message, None
        return [TextMessageEndEvent(message_id=message)]

    def _call_started(self, call: ToolCallStarted) -> list[BaseEvent]:
        from ag_ui.core import ToolCallArgsEvent, ToolCallEndEvent, ToolCallStartEvent

        return [
            *self._close_text(),
            ToolCallStartEvent(tool_call_id=call.call_id, tool_call_name=call.name),
            ToolCallArgsEvent(tool_call_id=call.call_id, delta=_json(call.args)),
            ToolCallEndEvent(tool_call_id=call.call_id),
        ]

    def _call_finished(self, call: ToolCallFinished) -> BaseEvent:
        from ag_ui.core import ToolCallResultEvent

        content = _json({"error": call.error}) if call.error is not None else _json(call.result)
        return ToolCallResultEvent(
            message_id=_id(), tool_call_id=call.call_id, content=content, role="tool"
        )


def _custom(name: str, value: dict[str, Any]) -> BaseEvent:
    from ag_ui.core import CustomEvent

    return CustomEvent(name=name, value=value)


def _json(value: Any) -> str:
    return json.dumps(jsonable(value), ensure_ascii=False)


def state_of_turn(answer: dict[str, Any]) -> dict[str, Any]:
    """The STATE_SNAPSHOT after a turn: what a client needs to continue and account."""
    return {k: answer[k] for k in sorted(SERVERS_KEYS)}
