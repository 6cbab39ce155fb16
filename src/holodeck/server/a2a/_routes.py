"""A2A (Agent2Agent): each served agent's card and its JSON-RPC endpoint.

- `GET /a2a/<agent>/.well-known/agent-card.json`: the agent's card;
  `GET /.well-known/agent-card.json`: the card of the only agent served;
- `POST /a2a/<agent>`: JSON-RPC 2.0, A2A 1.0's `SendMessage`, `SendStreamingMessage`
  (Server-Sent Events), `GetTask`, `CancelTask`, `ListTasks`, `SubscribeToTask`, and
  0.3's `message/send`, `message/stream`, `tasks/get`, `tasks/cancel`,
  `tasks/resubscribe`.

These paths sit behind the same middleware as the rest of the API (keys, rate, body
size, browser origins). The a2a-sdk package (extra `holodeck-agents[a2a]`) is imported on the
first A2A request; without it these routes answer 501 saying what to install."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from holodeck.server._errors import ApiError
from holodeck.server._keys import CARD
from holodeck.server._protocols import a2a_available
from holodeck.server._registry import ServedAgent
from holodeck.server._state import state_of
from holodeck.server._wire import error_responses, json_body, sse_schema
from holodeck.server.a2a._card import agent_card, card_json, endpoint_path, etag, etag_matches
from holodeck.server.a2a._refusals import early_refusal, log_refusal, quiet_sdk_refusals

if TYPE_CHECKING:
    from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher

router = APIRouter(tags=["A2A"])

METHODS = [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "CancelTask",
    "ListTasks",
    "SubscribeToTask",
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
]
_ERRORS = error_responses(401, 404, 413, 429, 501, 503)
_RPC_BODY = json_body(
    {
        "type": "object",
        "required": ["jsonrpc", "method"],
        "properties": {
            "jsonrpc": {"const": "2.0"},
            "id": {"type": ["string", "integer", "null"]},
            "method": {"type": "string", "enum": METHODS},
            "params": {"type": "object"},
        },
    }
)
_RPC_ANSWER = {
    "description": "A JSON-RPC response (errors included, with status 200); for "
    "SendStreamingMessage and message/stream, Server-Sent Events of JSON-RPC responses.",
    "content": {
        "application/json": {"schema": {"type": "object"}},
        "text/event-stream": {"schema": sse_schema(None, json_data=True)},
    },
}


def _require_sdk() -> None:
    if not a2a_available():
        raise ApiError(
            501,
            "a2a_unavailable",
            "A2A needs the a2a-sdk package, which this server does not have",
            hint="pip install 'holodeck-agents[a2a]' where the server runs, then restart it",
        )


def _dispatcher(app: FastAPI) -> JsonRpcDispatcher:
    """One dispatcher (and handler) per app, made on the first A2A request."""
    found: JsonRpcDispatcher | None = getattr(app.state, "a2a", None)
    if found is None:
        from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher

        from holodeck.server.a2a._handler import RequestContextBuilder, TurnHandler

        found = JsonRpcDispatcher(
            TurnHandler(),
            context_builder=RequestContextBuilder(),
            enable_v0_3_compat=True,
        )
        quiet_sdk_refusals()
        app.state.a2a = found
    return found


# the card follows what is served (an upload replaced, keys set): a client may keep it,
# but asks again each time (a 304 when it has not changed)
CARD_CACHE = "no-cache"


def _card(request: Request, served: ServedAgent) -> Response:
    _require_sdk()
    keyed = bool(state_of(request).keys.keys)
    found = card_json(agent_card(served, str(request.base_url), keyed))
    headers = {"ETag": etag(found), "Cache-Control": CARD_CACHE}
    if etag_matches(request.headers.get("if-none-match", ""), headers["ETag"]):
        return Response(status_code=304, headers=headers)
    return JSONResponse(found, headers=headers)


@router.get(
    CARD,
    summary="The A2A agent card of the only agent served",
    responses={200: {"content": {"application/json": {}}}, **_ERRORS},
)
async def default_card(request: Request) -> Response:
    agents = state_of(request).registry.agents
    if len(agents) != 1:
        cards = ", ".join(endpoint_path(name) + CARD for name in sorted(agents))
        raise ApiError(
            404,
            "not_found",
            f"{len(agents)} agents are served here: each has its own card",
            hint=f"read one of: {cards}" if cards else "serve an agent first",
        )
    return _card(request, await state_of(request).registry.get(next(iter(agents))))


@router.get(
    "/a2a/{agent}" + CARD,
    summary="An agent's A2A agent card",
    responses={200: {"content": {"application/json": {}}}, **_ERRORS},
)
async def card(agent: str, request: Request) -> Response:
    return _card(request, await state_of(request).registry.get(agent))


@router.post(
    "/a2a/{agent}",
    summary="Talk to an agent over A2A (JSON-RPC 2.0)",
    responses={200: _RPC_ANSWER, **_ERRORS},
    openapi_extra=_RPC_BODY,
)
# the same with a trailing slash: clients that join URLs so do not follow a redirect on POST
@router.post("/a2a/{agent}/", include_in_schema=False)
async def rpc(agent: str, request: Request) -> Response:
    _require_sdk()
    request.state.a2a_agent = await state_of(request).registry.get(agent)
    response = await early_refusal(request) or await _dispatcher(request.app).handle_requests(
        request
    )
    await log_refusal(request, response)
    return response
