"""One HoloDeck turn as an A2A task: the request's turn, the user's message (its ids are
the task's and context's), the events the running turn puts on its queue, and the task
as it stands in a given state (history, answer artifact, the calls waiting, and
`metadata.holodeck`: request id, the agent that answered and the turn's handoffs, tool
calls, usage with its cost, model). The answer's message and artifact name the agent that
wrote it in their `metadata.holodeck.agent`: after a handoff, not the served one."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from a2a.types import Artifact, Message, Part, Task, TaskState, TaskStatus

from holodeck.runtime import Attachment
from holodeck.server._registry import ServedAgent
from holodeck.server._turn_json import (
    call_tree,
    handoff_json,
    jsonable,
    pending_json,
    priced_usage_json,
)
from holodeck.server._turns import ServedTurn
from holodeck.server.a2a._task_records import agent_message, now, task_key

if TYPE_CHECKING:
    from fastapi import Request

ANSWER = "answer"  # the artifact holding the answer's text


@dataclass
class A2ATurn:
    request: Request
    served: ServedAgent
    owner: str | None
    turn: ServedTurn
    user: Message
    attachments: list[Attachment]
    queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    producer: asyncio.Task[None] | None = None
    earlier: list[Message] = field(default_factory=list)  # a resumed task's history

    @property
    def key(self) -> str:
        return task_key(self.served, self.owner, self.task_id)

    @property
    def task_id(self) -> str:
        return self.user.task_id

    @property
    def context_id(self) -> str:
        return self.user.context_id

    def task(self, state: int, answer: str | None = None, error: str | None = None) -> Task:
        status = TaskStatus(state=state, timestamp=now())  # type: ignore[arg-type]
        history = [*self.earlier, self.user]
        task = Task(id=self.task_id, context_id=self.context_id, status=status)
        if answer is not None:
            author = {"holodeck": {"agent": self.turn.answered_by}}
            reply = agent_message(answer, self.context_id, self.task_id)
            reply.metadata.update(author)
            status.message.CopyFrom(reply)
            history.append(reply)
            artifact = Artifact(artifact_id=ANSWER, name=ANSWER, parts=[Part(text=answer)])
            artifact.metadata.update(author)
            task.artifacts.append(artifact)
        elif error is not None:
            status.message.CopyFrom(agent_message(error, self.context_id, self.task_id))
        pending = self.turn.final.pending if self.turn.final else ()
        if state == TaskState.TASK_STATE_INPUT_REQUIRED:
            names = ", ".join(f"{c.name} ({c.call_id})" for c in pending)
            ask = agent_message(
                f"waits for approval of {names}: reply to this task with a data part "
                '{"approve": true} or {"approve": false, "reason": "..."} '
                '(and "callId" when several wait)',
                self.context_id,
                self.task_id,
            )
            status.message.CopyFrom(ask)
            history.append(ask)
        task.history.extend(history)
        task.status.CopyFrom(status)
        turn = self.turn
        task.metadata.update(
            {
                "holodeck": {
                    "agent": self.served.name,
                    "answered_by": turn.answered_by,
                    "handoffs": [handoff_json(h) for h in turn.handoffs],
                    "request_id": turn.request_id,
                    "tool_calls": jsonable(call_tree(turn.calls)),
                    "usage": priced_usage_json(turn.usage, turn.cost),
                    "model": turn.final.model if turn.final else None,
                    "pending": [pending_json(c) for c in pending],
                }
            }
        )
        return task
