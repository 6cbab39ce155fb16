"""`POST /v1/chat`: a message in, the agent's answer out, as JSON or as Server-Sent
Events (`stream: true`): `session`, `compacted`, `text`, `tool_call_started`,
`tool_call_finished`, `guardrail`, `approval_required`, `handoff`, then `final` (the JSON
answer) or `error`. A client that goes away, streaming or not,
cancels the turn and the conversation stays as it was before it."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from sse_starlette import EventSourceResponse, ServerSentEvent

from holodeck.runtime import (
    ApprovalRequired,
    Event,
    GuardrailTriggered,
    HandedOff,
    HistoryCompacted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from holodeck.server._errors import ApiError
from holodeck.server._state import key_name_of, request_id_of, state_of
from holodeck.server._turn_json import (
    attachments_from,
    call_json,
    compacted_json,
    guardrail_json,
    handoff_json,
    jsonable,
    pending_json,
)
from holodeck.server._turns import (
    ServedTurn,
    open_turn,
    refuse_anothers_session,
    run_through,
)
from holodeck.server._wire import ChatRequest, ChatResponse, error_responses, event_stream

router = APIRouter()

_ERRORS = error_responses(400, 401, 404, 409, 413, 422, 429, 502, 503)
EVENTS = [
    "session",
    "text",
    "tool_call_started",
    "tool_call_finished",
    "guardrail",
    "approval_required",
    "compacted",
    "handoff",
    "final",
    "error",
]
_STREAM_DOC = event_stream("The answer; with `stream: true`, Server-Sent Events.", EVENTS)


@router.post(
    "/v1/chat",
    response_model=ChatResponse,
    responses={**_ERRORS, 200: _STREAM_DOC},
    summary="Send a message to an agent",
)
async def chat(body: ChatRequest, request: Request) -> Any:
    state = state_of(request)
    served = await state.registry.get(body.agent)
    attachments = attachments_from(body.attachments)
    if body.session_id is not None:
        await refuse_anothers_session(request, served, body.session_id)
    turn = ServedTurn(
        served=served,
        session_id=body.session_id or uuid.uuid4().hex,
        request_id=request_id_of(request),
        message=body.message,
        endpoint="/v1/chat",
        owner=key_name_of(request),
        user_id=body.user_id,
    )
    events = await open_turn(
        request,
        turn,
        attachments=attachments,
        stream_text=body.stream,
    )
    if not body.stream:
        await run_through(request, events)
        return turn.answer_json()
    return EventSourceResponse(
        sse_answer(turn, events),
        ping=15,
        shutdown_grace_period=state.options.shutdown_grace_seconds,
        headers={"X-Request-ID": turn.request_id},
    )


async def sse_answer(
    turn: ServedTurn, events: AsyncIterator[Event]
) -> AsyncIterator[ServerSentEvent]:
    head = {"session_id": turn.session_id, "agent": turn.served.name, "request_id": turn.request_id}
    yield _event("session", head)
    try:
        async for event in events:
            sent = sse_of(event)
            if sent is not None:
                yield sent
    except ApiError as exc:
        error = {"type": exc.kind, "message": exc.message, "hint": exc.hint}
        yield _event("error", {"error": error, "request_id": turn.request_id})
        return
    yield _event("final", turn.answer_json())


def sse_of(event: Event) -> ServerSentEvent | None:
    if isinstance(event, TextDelta):
        return _event("text", {"text": event.text, "agent": event.agent})
    if isinstance(event, ToolCallStarted):
        started = {
            "id": event.call_id,
            "name": event.name,
            "args": jsonable(event.args),
            "agent": event.agent,
            "parent_id": event.parent_call_id,
        }
        return _event("tool_call_started", started)
    if isinstance(event, ToolCallFinished):
        return _event("tool_call_finished", {**call_json(event), "parent_id": event.parent_call_id})
    if isinstance(event, GuardrailTriggered):
        return _event("guardrail", guardrail_json(event))
    if isinstance(event, ApprovalRequired):  # the turn pauses; `final` lists these too
        return _event("approval_required", pending_json(event))
    if isinstance(event, HistoryCompacted):  # before the turn: older turns summarised
        return _event("compacted", compacted_json(event))
    if isinstance(event, HandedOff):  # `to_agent` answers from here on
        return _event("handoff", handoff_json(event))
    return None


def _event(name: str, data: dict[str, Any]) -> ServerSentEvent:
    return ServerSentEvent(data=json.dumps(data, ensure_ascii=False), event=name)
