"""The FastAPI application: its lifespan is a `Run` that opens the agents and their
stores and closes them (MCP servers, connections, telemetry) when the server stops."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse
from starlette.routing import Route

from holodeck._version import __version__
from holodeck.http import LoopbackOnly, RequestIds, SecurityHeaders
from holodeck.runtime import Hosting, Run
from holodeck.server import _routes_agents, _routes_memories, chat
from holodeck.server._errors import install_error_handlers, respond
from holodeck.server._guards import BodyLimit, TurnSlots
from holodeck.server._json_depth import NestingLimit
from holodeck.server._keys import Authenticate, Keys
from holodeck.server._options import ServeOptions
from holodeck.server._origins import LOOPBACK_ADVICE, OriginGuard
from holodeck.server._registry import Registry
from holodeck.server._state import ServerState
from holodeck.server.a2a import router as a2a_router
from holodeck.server.agui import router as agui_router
from holodeck.server.mcp import http_endpoint
from holodeck.server.openai import chat_router, responses_router
from holodeck.spec.models.agent_spec import AgentSpec


def create_app(options: ServeOptions, specs: Sequence[AgentSpec] = ()) -> FastAPI:
    """The app serving `options.paths`; agents start when the app's lifespan starts.
    `specs`: those paths already loaded (by `holodeck deploy`), not read again."""
    keys = Keys(options.keys, options.requests_per_minute)
    mcp = http_endpoint()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # each process (every --workers worker) has its run: its agents, their stores and
        # sessions, its telemetry exporters, stopped when it stops
        async with Run() as run:
            # its agents answer others, whoever started this process: served mode
            # each session's workspace tools act in a folder of its own under the state folder
            hosting = Hosting(served=True, workspaces=Path(options.state_dir) / "work")
            registry = Registry(options, run, specs, hosting=hosting)
            app.state.holodeck = ServerState(
                options=options,
                registry=registry,
                slots=TurnSlots(
                    options.max_concurrent_turns,
                    options.max_queued_turns,
                    options.max_queued_turns_per_session,
                ),
                keys=keys,
            )
            await registry.open()
            try:
                yield
            finally:  # before the agents close: no tool call is left running
                await mcp.aclose()

    app = FastAPI(
        title="HoloDeck agent server",
        version=__version__,
        lifespan=lifespan,
        description="Chat with HoloDeck agents over HTTP: /v1/chat, the OpenAI-compatible "
        "/v1/chat/completions, AG-UI at /awp, MCP (streamable HTTP) at /mcp, A2A at "
        "/a2a/{agent}, sessions and agent images. GET /v1/agents lists the protocols each "
        "agent speaks.",
    )
    app.state.started = time.time()
    install_error_handlers(app)

    # innermost first: the body is read only for a request with a key, from a page
    # allowed to send it, to a host this server is
    app.add_middleware(NestingLimit)  # a body within the size limit, before it is parsed
    app.add_middleware(BodyLimit, limit=options.max_request_bytes)
    app.add_middleware(Authenticate, keys=keys)
    if options.cors_origins:  # outside the keys: a browser reads a 401's reason too
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(options.cors_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "X-Request-ID", "A2A-Version"],
            expose_headers=["X-Request-ID", "Retry-After"],
        )
    app.add_middleware(OriginGuard, cors_origins=options.cors_origins)
    if options.loopback:  # a page's name rebound to 127.0.0.1 is not this server's
        app.add_middleware(LoopbackOnly, advice=LOOPBACK_ADVICE, respond=respond)
    app.add_middleware(RequestIds)  # even a refused request gets an id
    app.add_middleware(SecurityHeaders)  # outermost: on every answer

    app.include_router(_routes_agents.service)
    app.include_router(_routes_agents.router)
    app.include_router(chat.router)
    app.include_router(chat_router)
    app.include_router(responses_router)
    app.include_router(chat.sessions_router)
    app.include_router(_routes_memories.router)
    app.include_router(a2a_router)
    app.include_router(agui_router)
    # the MCP SDK's transport answers POST (and DELETE) itself
    app.router.routes.append(Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]))

    page = files("holodeck.server").joinpath("static/index.html")

    # HEAD too: uptime checkers and `curl -I` ask for the page that way
    @app.api_route(
        "/", methods=["GET", "HEAD"], response_class=HTMLResponse, include_in_schema=False
    )
    async def chat_page() -> HTMLResponse:
        return HTMLResponse(page.read_text(encoding="utf-8"))

    return app
