"""`GET /v1/sessions/{id}` (the conversation so far) and `DELETE /v1/sessions/{id}`, of
the sessions the request's API key started: another key's are unknown here (404)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path, Query, Request

from holodeck.runtime import Session, entries_of
from holodeck.server._registry import ServedAgent
from holodeck.server._state import key_name_of, state_of
from holodeck.server._turns import jsonable, session_key, unknown_session, usage_json
from holodeck.server._wire import AgentName, Deleted, ErrorResponse, SessionId, SessionOut

router = APIRouter()

_ERRORS: dict[int | str, dict[str, Any]] = {
    s: {"model": ErrorResponse} for s in (401, 404, 422, 429, 503)
}
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
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "messages": messages,
        "usage": usage_json(session.spend.usage),
    }
