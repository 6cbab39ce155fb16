"""`GET /v1/agents` (each agent's state, protocols and modalities), `POST /v1/agents` (an
agent image as a .tar.gz body), and the
service's own `GET /health` (the process serves) and `GET /ready` (every agent's tools
and servers are up)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from holodeck.server._errors import ApiError
from holodeck.server._protocols import protocols
from holodeck.server._registry import Registry, ServedAgent
from holodeck.server._state import state_of
from holodeck.server._wire import (
    AgentList,
    AgentStatus,
    HealthResponse,
    ModalitiesOut,
    ReadyResponse,
    error_responses,
)

router = APIRouter()
service = APIRouter()

_ARCHIVE_TYPES = ("application/gzip", "application/x-gzip", "application/octet-stream")
_ERRORS = error_responses(401, 403, 409, 413, 415, 422, 429)


def status_of(served: ServedAgent) -> AgentStatus:
    return AgentStatus(
        name=served.name,
        description=served.spec.description,
        status=served.status,
        error=served.error,
        uploaded=served.uploaded,
        tool_failures=served.agent.tool_failures,
        protocols=protocols(),
        modalities=ModalitiesOut(
            input=list(served.spec.interaction.input_modalities),
            output=list(served.spec.interaction.output_modalities),
        ),
    )


def statuses(registry: Registry) -> list[AgentStatus]:
    """Every agent served, and every stored upload that does not load, by name."""
    agents = [status_of(s) for s in registry.agents.values()]
    agents += [
        AgentStatus(name=name, status="failed", error=error, uploaded=True)
        for name, error in registry.broken.items()
    ]
    return sorted(agents, key=lambda a: a.name)


@service.get("/health", response_model=HealthResponse)
async def health() -> HealthResponse:
    return HealthResponse()


@service.get("/ready", response_model=ReadyResponse, responses={503: {"model": ReadyResponse}})
async def ready(request: Request) -> Any:
    registry = state_of(request).registry
    # an upload that does not load, or failed to start, is listed, but waiting will not
    # fix it: the other agents decide readiness
    serving = [s for s in registry.agents.values() if not (s.uploaded and s.status == "failed")]
    up = bool(serving) and all(s.status == "ready" for s in serving)
    body = ReadyResponse(ready=up, agents=statuses(registry))
    return JSONResponse(body.model_dump(), status_code=200 if body.ready else 503)


@router.get("/v1/agents", response_model=AgentList, responses=_ERRORS)
async def list_agents(request: Request) -> AgentList:
    return AgentList(agents=statuses(state_of(request).registry))


@router.post(
    "/v1/agents",
    status_code=201,
    response_model=AgentStatus,
    responses=_ERRORS,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/gzip": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
    summary="Serve an agent image (.tar.gz)",
)
async def upload_agent(request: Request) -> AgentStatus:
    state = state_of(request)
    if not state.options.allow_uploads:
        raise ApiError(
            403,
            "uploads_disabled",
            "this server does not take agent uploads: an uploaded agent's tools run here",
            hint="start it with `holodeck deploy --allow-uploads` (or deployment.allow_uploads: "
            "true), behind API keys",
        )
    kind = request.headers.get("content-type", "").split(";")[0].strip()
    if kind not in _ARCHIVE_TYPES:
        raise ApiError(
            415,
            "unsupported_media_type",
            f"an agent image is sent as a .tar.gz body, not {kind or 'no content type'}",
            hint="curl --data-binary @agent.tar.gz -H 'Content-Type: application/gzip' "
            "HOST/v1/agents",
        )
    data = await request.body()
    if not data:
        raise ApiError(422, "invalid_agent", "the body is empty: send the image's .tar.gz")
    served = await state.registry.upload(data)
    return status_of(served)
