"""MCP: every served agent as a tool of an MCP server (the official `mcp` SDK's
low-level server), over streamable HTTP at `/mcp` and over stdio (`holodeck mcp serve`).
One tool per agent, named as the agent: `question` in, the agent's answer out, as text
and as structured content (the /v1/chat answer: `response`, `session_id`, tool calls,
usage), so a caller continues the conversation by passing `session_id` back.

Over HTTP each request stands alone (the SDK's stateless mode): the conversation lives in
the session store, so replicas behind a load balancer serve any request, and a tool call
is a served turn as /v1/chat's is (keys, session ownership, limits, request log, trace).
A call to a tool that is not served is a JSON-RPC error (`-32602`, invalid params), as
the specification asks; any other failure the caller can fix is the tool's error result
(`isError`), saying what to do.

The SDK's server takes about two seconds to import: /mcp imports it and starts on its
first request, in a task the app's lifespan stops."""

from __future__ import annotations

import asyncio
import functools
import importlib
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from holodeck._version import __version__
from holodeck.errors import HoloDeckError
from holodeck.server._errors import ApiError
from holodeck.server._state import key_name_of, request_id_of, state_of
from holodeck.server._turns import ServedTurn, open_turn, refuse_anothers_session, run_through
from holodeck.server._wire import ChatResponse

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

# (context) -> (name, description) of each agent offered as a tool
ListAgents = Callable[[Any], list[tuple[str, str | None]]]
# (context, agent, question, session id) -> the /v1/chat answer
Ask = Callable[[Any, str, str, str | None], Awaitable[dict[str, Any]]]

_SESSION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "minLength": 1, "description": "What to ask the agent."},
        "session_id": {
            "type": "string",
            "pattern": r"^[A-Za-z0-9._:-]{1,128}$",
            "description": "Continue this conversation: the session_id of an earlier "
            "answer. A new conversation when absent.",
        },
    },
    "required": ["question"],
    "additionalProperties": False,
}


def tool_of(name: str, description: str | None) -> mcp_types.Tool:
    import mcp_types

    about = f"Ask the agent {name}" + (f": {description}" if description else ".")
    return mcp_types.Tool(
        name=name,
        description=about + " Pass the answer's session_id back to continue the conversation.",
        input_schema=INPUT_SCHEMA,
        output_schema=_output_schema(),
    )


@functools.cache
def _output_schema() -> dict[str, Any]:
    return ChatResponse.model_json_schema()


def mcp_server(list_agents: ListAgents, ask: Ask) -> Server[Any]:
    """The MCP server offering the agents `list_agents` names; `ask` runs a turn."""
    import mcp_types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=[tool_of(n, d) for n, d in list_agents(ctx)])

    async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> Any:
        from mcp.shared.exceptions import MCPError

        names = [n for n, _ in list_agents(ctx)]
        if params.name not in names:  # no such tool: a protocol error, not a tool's result
            raise MCPError(
                mcp_types.INVALID_PARAMS,
                f"Unknown tool: {params.name!r} is not served here (tools: {', '.join(names)})",
            )
        arguments = params.arguments or {}
        question, session_id = arguments.get("question"), arguments.get("session_id")
        problem = _problem(question, session_id, arguments)
        if problem is not None:
            return _error(problem)
        try:
            answer = await ask(ctx, params.name, str(question), session_id)
        except HoloDeckError as exc:  # ApiError too: refused, busy, over a cap
            return _error(exc.message + (f" (hint: {exc.hint})" if exc.hint else ""))
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=answer["response"])],
            structured_content=answer,
            is_error=False,
        )

    return Server(
        "holodeck",
        version=__version__,
        instructions="Each tool is a HoloDeck agent: ask it a question; pass the "
        "session_id of its answer to continue the conversation.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _problem(question: Any, session_id: Any, arguments: dict[str, Any]) -> str | None:
    unknown = sorted(set(arguments) - {"question", "session_id"})
    if unknown:
        return f"unknown argument {unknown[0]!r}: the tool takes `question` and `session_id`"
    if not isinstance(question, str) or not question.strip():
        return "`question` is required: the text to ask the agent"
    if session_id is not None and not (
        isinstance(session_id, str) and _SESSION_ID.fullmatch(session_id)
    ):
        return "`session_id`: letters, digits and `._:-`, at most 128 characters"
    return None


def _error(message: str) -> mcp_types.CallToolResult:
    import mcp_types

    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=message)], is_error=True)


class McpEndpoint:
    """The ASGI app at /mcp: the SDK's streamable HTTP transport, stateless, its session
    manager started on the first request in a task that `aclose` stops."""

    def __init__(self, make_server: Callable[[], Server[Any]]) -> None:
        self._make_server = make_server
        self._manager: StreamableHTTPSessionManager | None = None
        self._starting = asyncio.Lock()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self._manager or await self._start()
        await manager.handle_request(scope, receive, send)

    async def _start(self) -> StreamableHTTPSessionManager:
        async with self._starting:
            if self._manager is not None:
                return self._manager
            # imported off the event loop: other requests go on meanwhile
            await asyncio.to_thread(importlib.import_module, "mcp.server.streamable_http_manager")
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

            # the app's own guards (keys, browser origins, body size) stand in front:
            # the SDK's host check would refuse the names a deployment is reached by
            manager = StreamableHTTPSessionManager(
                app=self._make_server(), stateless=True, json_response=True
            )
            running = asyncio.Event()
            # not the request's task: the manager outlives the request
            self._task = asyncio.get_running_loop().create_task(
                self._run(manager, running), name="mcp streamable http"
            )
            running_or_failed = asyncio.ensure_future(running.wait())
            await asyncio.wait({running_or_failed, self._task}, return_when="FIRST_COMPLETED")
            running_or_failed.cancel()
            if not running.is_set():  # the manager failed to start: say so
                await self._task
            self._manager = manager
            return manager

    async def _run(self, manager: StreamableHTTPSessionManager, running: asyncio.Event) -> None:
        async with manager.run():
            running.set()
            await self._stop.wait()

    async def aclose(self) -> None:
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)


# -- over HTTP, in the app


def served_agents(ctx: Any) -> list[tuple[str, str | None]]:
    """The app's agents (the HTTP request is the tool call's context)."""
    agents = state_of(ctx.request).registry.agents.values()
    return sorted((s.name, s.spec.description) for s in agents)


async def ask_served(ctx: Any, name: str, question: str, session_id: str | None) -> dict[str, Any]:
    """A served turn, as /v1/chat runs one, for the tool call of this HTTP request."""
    request: Request = ctx.request
    served = await state_of(request).registry.get(name)
    turn = ServedTurn(
        served=served,
        session_id=session_id or uuid.uuid4().hex,
        request_id=request_id_of(request),
        message=question,
        endpoint="/mcp",
        owner=key_name_of(request),
    )
    if session_id is not None:
        try:
            await refuse_anothers_session(request, served, session_id)
        except ApiError as exc:  # the tool's error result, and a line in the log
            turn.log(exc.status, exc.message)
            raise
    events = await open_turn(request, turn, stream_text=False)
    # a client that hangs up cancels the turn (499), as on /v1/chat: the SDK has read
    # the body, so the request's next message is the disconnect
    await run_through(request, events)
    return turn.answer_json()


def http_endpoint() -> McpEndpoint:
    return McpEndpoint(lambda: mcp_server(served_agents, ask_served))
