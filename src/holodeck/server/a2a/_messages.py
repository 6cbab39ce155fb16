"""What a message sent to an agent asks for: its text (text and data parts) and files,
the task waiting for input it resumes (its `taskId`) with the decision it carries, and
the turn that runs it in the session its `contextId` names (a new one without)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from a2a.types import Message, Task, TaskState
from a2a.utils.errors import (
    ContentTypeNotSupportedError,
    InvalidParamsError,
    UnsupportedOperationError,
)
from google.protobuf.json_format import MessageToDict

from holodeck.runtime import Attachment, Decision
from holodeck.server._errors import ApiError
from holodeck.server._registry import ServedAgent
from holodeck.server._state import key_name_of, request_id_of
from holodeck.server._turns import ServedTurn, refuse_anothers_session
from holodeck.server.a2a._rpc_errors import a2a_error, no_task, state_name
from holodeck.server.a2a._task_records import load_task, new_id
from holodeck.server.a2a._turn_task import A2ATurn

if TYPE_CHECKING:
    from a2a.server.context import ServerCallContext
    from fastapi import Request

SESSION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")  # as /v1/chat's session_id

DECISION_HINT = (
    'send a data part {"approve": true} or {"approve": false, "reason": "why"}, with '
    '"callId" naming the call when several wait'
)


async def begin(params: Any, context: ServerCallContext) -> A2ATurn:
    """The turn the message of `params` asks for, refused (a JSON-RPC error) when it
    cannot be taken; it has not started."""
    request: Request = context.state["request"]
    served: ServedAgent = request.state.a2a_agent
    owner = key_name_of(request)
    message = params.message
    text, attachments = content(message)
    paused: Task | None = None
    if message.task_id:
        paused = await paused_task(served, owner, message)
    context_id = paused.context_id if paused else message.context_id or new_id()
    if not SESSION_ID.fullmatch(context_id):
        raise InvalidParamsError(
            "message.contextId: letters, digits and `._:-`, at most 128 characters",
            data={"hint": "send the contextId an earlier task of this server returned"},
        )
    try:
        await refuse_anothers_session(request, served, context_id)
    except ApiError as exc:
        raise a2a_error(exc) from None
    user = Message()
    user.CopyFrom(message)
    user.context_id, user.task_id = context_id, paused.id if paused else new_id()
    if not user.message_id:
        user.message_id = new_id()
    turn = ServedTurn(
        served=served,
        session_id=context_id,
        request_id=request_id_of(request),
        message=text,
        endpoint=request.url.path,
        owner=owner,
        decision=decision(message, paused) if paused else None,
    )
    earlier = list(paused.history) if paused else []
    return A2ATurn(request, served, owner, turn, user, attachments, earlier=earlier)


async def paused_task(served: ServedAgent, owner: str | None, message: Message) -> Task:
    """The task a message with a `taskId` resumes: one waiting for input (a decision);
    a message to any other task is refused (each message starts a new task)."""
    task_id = message.task_id
    task = await load_task(served, owner, task_id)
    if task is None:
        raise no_task(task_id)
    if task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
        raise UnsupportedOperationError(
            f"task {task_id} is {state_name(task.status.state)}: only a task waiting for "
            f"input takes a further message; to go on with the conversation send contextId "
            f"{task.context_id!r} and no taskId, which starts a new task",
            data={"hint": f"send contextId {task.context_id!r}, without taskId"},
        )
    if message.context_id and message.context_id != task.context_id:
        raise InvalidParamsError(
            f"message.contextId: task {task_id} belongs to context {task.context_id!r}",
            data={"hint": f"send contextId {task.context_id!r}, or leave it out"},
        )
    return task


def waiting_calls(task: Task) -> list[str]:
    """The ids of the calls a task waiting for input waits on (from its record)."""
    pending = MessageToDict(task.metadata).get("holodeck", {}).get("pending", [])
    return [str(c["id"]) for c in pending]


def decision(message: Message, task: Task) -> tuple[str, Decision]:
    """The decision a message to a task waiting for approval carries (its data part)."""
    waiting = waiting_calls(task)
    for part in message.parts:
        if part.WhichOneof("content") != "data":
            continue
        data = MessageToDict(part.data)
        approve, reason, call_id = data.get("approve"), data.get("reason"), data.get("callId")
        if not isinstance(approve, bool) or not isinstance(reason, str | None):
            break
        if call_id is None and len(waiting) == 1:
            call_id = waiting[0]
        if not isinstance(call_id, str) or not call_id:
            raise InvalidParamsError(
                f"message.parts: task {task.id} waits for {', '.join(waiting)}: name one "
                'with "callId"',
                data={"hint": DECISION_HINT},
            )
        return call_id, Decision(approve, reason)
    raise InvalidParamsError(
        f"message.parts: task {task.id} waits for approval, and this message decides nothing",
        data={"hint": DECISION_HINT},
    )


def content(message: Message) -> tuple[str, list[Attachment]]:
    """The message's text (its text and data parts), and its files as attachments."""
    texts: list[str] = []
    files: list[Attachment] = []
    for index, part in enumerate(message.parts):
        kind = part.WhichOneof("content")
        if kind == "text":
            texts.append(part.text)
        elif kind == "data":
            texts.append(json.dumps(MessageToDict(part.data), ensure_ascii=False))
        elif kind == "raw":
            media = part.media_type or "application/octet-stream"
            files.append(Attachment(part.raw, media, part.filename))
        else:
            raise ContentTypeNotSupportedError(
                f"message.parts[{index}]: a {kind or 'empty'} part is not taken",
                data={"hint": "send text, data, or a file's bytes (raw) with its mediaType"},
            )
    text = "\n".join(t for t in texts if t)
    if not text.strip():
        raise ContentTypeNotSupportedError(
            "message: no text", data={"hint": "send at least one text part with the question"}
        )
    return text, files
