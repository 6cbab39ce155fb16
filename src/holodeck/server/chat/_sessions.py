"""`GET /v1/sessions/{id}` (the conversation so far) and `DELETE /v1/sessions/{id}`, of
the sessions the request's API key started: another key's are unknown here (404).
`POST /v1/sessions/{id}/approvals/{call_id}` decides a tool call a paused turn waits for
(another key's session: 403); the last decision resumes the turn and answers with the
rest of it, as /v1/chat does (JSON, or Server-Sent Events with `stream: true`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path, Query, Request
from sse_starlette import EventSourceResponse

from holodeck.runtime import Decision, Session, entries_of
from holodeck.server._errors import ApiError
from holodeck.server._registry import ServedAgent
from holodeck.server._state import key_name_of, request_id_of, state_of
from holodeck.server._turn_json import (
    jsonable,
    pending_json,
    priced_usage_json,
)
from holodeck.server._turns import (
    ServedTurn,
    open_turn,
    run_through,
    session_key,
    unknown_session,
)
from holodeck.server._wire import (
    AgentName,
    ApprovalIn,
    ChatResponse,
    Deleted,
    SessionId,
    SessionOut,
    error_responses,
    event_stream,
)
from holodeck.server.chat._chat import EVENTS, sse_answer

router = APIRouter()

_ERRORS = error_responses(401, 404, 422, 429, 503)
SessionPath = Path(description="The session_id a chat answer returned.")
AgentQuery = Query(default=None, description="The agent; by default every served agent's.")


async def _candidates(request: Request, agent: str | None) -> list[ServedAgent]:
    registry = state_of(request).registry
    if agent is not None:
        return [await registry.get(agent)]
    return list(registry.agents.values())


@router.get("/v1/sessions/{session_id}", response_model=SessionOut, responses=_ERRORS)
async def get_session(
    request: Request, session_id: SessionId = SessionPath, agent: AgentName | None = AgentQuery
) -> dict[str, Any]:
    owner = key_name_of(request)
    for served in await _candidates(request, agent):
        data = await served.store.load(session_key(served, owner, session_id))
        if data is not None:
            session = Session.from_json(served.agent, data, session_id=session_id)
            return _session_json(served, session)
    raise unknown_session(session_id)


@router.delete("/v1/sessions/{session_id}", response_model=Deleted, responses=_ERRORS)
async def delete_session(
    request: Request, session_id: SessionId = SessionPath, agent: AgentName | None = AgentQuery
) -> dict[str, bool]:
    owner = key_name_of(request)
    for served in await _candidates(request, agent):
        key = session_key(served, owner, session_id)
        async with served.store.lock(key):  # not under a running turn
            if await served.store.delete(key):
                return {"deleted": True}
    raise unknown_session(session_id)


CallPath = Path(
    description="The id of a call waiting for approval (`pending[].id` of the answer).",
    pattern=r"^[A-Za-z0-9._:-]{1,256}$",
)
_DECIDE_ERRORS = error_responses(401, 403, 404, 409, 413, 422, 429, 502, 503)
_STREAM_DOC = event_stream(
    "The rest of the turn once every call is decided (or the calls still waiting, in "
    "`pending`); with `stream: true`, Server-Sent Events.",
    EVENTS,
)


@router.post(
    "/v1/sessions/{session_id}/approvals/{call_id}",
    response_model=ChatResponse,
    responses={**_DECIDE_ERRORS, 200: _STREAM_DOC},
    summary="Approve or deny a tool call a paused turn waits for",
)
async def decide(
    body: ApprovalIn,
    request: Request,
    session_id: SessionId = SessionPath,
    call_id: str = CallPath,
) -> Any:
    state = state_of(request)
    served = await state.registry.get(body.agent)
    owner = key_name_of(request)
    if await served.store.load(session_key(served, owner, session_id)) is None:
        await _refuse_anothers(request, served, session_id)
        raise unknown_session(session_id)
    verb = "approve" if body.approve else "deny"
    turn = ServedTurn(
        served=served,
        session_id=session_id,
        request_id=request_id_of(request),
        message=f"{verb} {call_id}" + (f": {body.reason}" if body.reason else ""),
        endpoint="/v1/sessions/{session_id}/approvals/{call_id}",
        owner=owner,
        decision=(call_id, Decision(body.approve, body.reason)),
    )
    events = await open_turn(request, turn, stream_text=body.stream)
    if not body.stream:
        await run_through(request, events)
        return turn.answer_json()
    return EventSourceResponse(
        sse_answer(turn, events),
        ping=15,
        shutdown_grace_period=state.options.shutdown_grace_seconds,
        headers={"X-Request-ID": turn.request_id},
    )


async def _refuse_anothers(request: Request, served: ServedAgent, session_id: str) -> None:
    """403 for a session another key started: deciding its calls is that key's."""
    owner = key_name_of(request)
    for name, _ in state_of(request).keys.keys:
        if name != owner and await served.store.load(session_key(served, name, session_id)):
            raise ApiError(
                403,
                "not_your_session",
                f"session {session_id!r} belongs to another API key",
                hint="a turn's tool calls are decided with the key that started the session",
            )


def _session_json(served: ServedAgent, session: Session) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for entry in entries_of(session.messages):
        shown: dict[str, Any] = {"role": entry.role, "content": jsonable(entry.content)}
        if entry.role in ("tool_call", "tool_result"):
            shown = {"role": entry.role, "name": entry.name, "content": shown["content"]}
        messages.append(shown)
    return {
        "session_id": session.id,
        "agent": served.name,
        "answering_agent": session.answering_agent,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "messages": messages,
        "usage": priced_usage_json(session.spend.usage, session.spend.cost),
        "pending": [pending_json(c) for c in session.pending.undecided] if session.pending else [],
    }
