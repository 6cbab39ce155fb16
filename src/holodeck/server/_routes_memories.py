"""A user's long-term memories (`memory.long_term`), under the request's API key:
`GET /v1/memories` lists them (the export: every field, as JSON), `DELETE /v1/memories`
deletes them all and `DELETE /v1/memories/{id}` one. The user is the key's, or the
`user_id` it names, which lives under that key as a session does (memory/_owners.py):
another key never reaches them. Each request is written in the agent's request log."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, Field

from holodeck.memory import Memory, MemoryBank, open_bank, served_user
from holodeck.runtime import tool_context
from holodeck.server._errors import ApiError
from holodeck.server._registry import ServedAgent
from holodeck.server._request_log import RequestRecord
from holodeck.server._state import key_name_of, request_id_of, state_of
from holodeck.server._wire import AgentName, UserId, error_responses

router = APIRouter()

_ERRORS = error_responses(401, 404, 409, 422, 429, 503)
AgentQuery = Query(default=None, description="The agent; needed when several are served.")
UserQuery = Query(default=None, description="The user; by default the API key's own.")


class MemoryOut(BaseModel):
    id: str
    text: str
    created_at: float = Field(description="Seconds since the epoch.")
    session: str | None = Field(description="The session it is kept to (`scope: session`).")


class MemoryList(BaseModel):
    agent: str
    user_id: str | None
    memories: list[MemoryOut]


class MemoriesDeleted(BaseModel):
    deleted: int


async def _bank(request: Request, agent: str | None) -> tuple[ServedAgent, MemoryBank]:
    served = await state_of(request).registry.get(agent)
    spec = served.agent.spec
    bank = open_bank(spec, tool_context(spec, served.agent.options, served.agent.hosting))
    if bank is None:
        raise ApiError(
            404,
            "no_memory",
            f"agent {served.name!r} keeps no long-term memories",
            hint="set `memory.long_term` in its definition",
        )
    if bank.scope == "agent":
        raise ApiError(
            409,
            "shared_memory",
            f"agent {served.name!r} keeps one set of memories for every user "
            "(`scope: agent`): no user's to list or delete",
            hint="manage them on the server's host: holodeck memory list|export|delete",
        )
    return served, bank


def _log(request: Request, served: ServedAgent, started: float, status: int, said: str) -> None:
    served.log.write(
        RequestRecord(
            request_id=request_id_of(request),
            endpoint=str(request.url.path),
            status=status,
            started=started,
            message=said,
            key=key_name_of(request),
        )
    )


def _json(memory: Memory) -> MemoryOut:
    return MemoryOut(**memory.as_json())


@router.get("/v1/memories", response_model=MemoryList, responses=_ERRORS)
async def list_memories(
    request: Request, agent: AgentName | None = AgentQuery, user_id: UserId | None = UserQuery
) -> dict[str, Any]:
    started = time.perf_counter()
    served, bank = await _bank(request, agent)
    user = served_user(key_name_of(request), user_id)
    async with bank:
        found = await bank.memories(user)
    _log(request, served, started, 200, f"list memories of {user_id or 'the key'}")
    return {"agent": served.name, "user_id": user_id, "memories": [_json(m) for m in found]}


@router.delete("/v1/memories", response_model=MemoriesDeleted, responses=_ERRORS)
async def delete_memories(
    request: Request, agent: AgentName | None = AgentQuery, user_id: UserId | None = UserQuery
) -> dict[str, int]:
    started = time.perf_counter()
    served, bank = await _bank(request, agent)
    user = served_user(key_name_of(request), user_id)
    async with bank:
        deleted = await bank.delete_user(user)
    _log(request, served, started, 200, f"delete memories of {user_id or 'the key'}")
    return {"deleted": deleted}


MemoryPath = Path(description="The memory's id.", pattern=r"^[A-Za-z0-9_-]{1,64}$")


@router.delete("/v1/memories/{memory_id}", response_model=MemoriesDeleted, responses=_ERRORS)
async def delete_memory(
    request: Request,
    memory_id: str = MemoryPath,
    agent: AgentName | None = AgentQuery,
    user_id: UserId | None = UserQuery,
) -> dict[str, int]:
    started = time.perf_counter()
    served, bank = await _bank(request, agent)
    user = served_user(key_name_of(request), user_id)
    async with bank:
        deleted = await bank.delete(user, memory_id)
    status = 200 if deleted else 404
    _log(request, served, started, status, f"delete memory {memory_id}")
    if not deleted:
        raise ApiError(
            404,
            "unknown_memory",
            f"no memory {memory_id!r} of this user",
            hint="GET /v1/memories lists the user's memories and their ids",
        )
    return {"deleted": 1}
