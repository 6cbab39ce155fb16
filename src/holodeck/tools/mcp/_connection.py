"""One server's connection: starting it (with retries and `startup_timeout`), calls
(with `timeout`, retried when the server stopped or was unreachable), restarts, stopping
it, and messages that say what to check. Everything runs on the caller's event loop:
a connection is held open by a task of that loop, so it outlives the turn that started it."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TextIO, TypeVar, cast

import httpx2  # loaded with the MCP client already (`_errors`)

from holodeck._version import __version__
from holodeck.net import OutboundBlocked, checked_client
from holodeck.spec.models.tools import McpTool, RetryPolicy
from holodeck.tools.mcp._errors import (
    McpServerError,
    McpToolError,
    _explain,
    _http_status,
    _is_cancel_group,
    _is_connection_failure,
    _Lost,
    _Permanent,
)
from holodeck.tools.mcp._launch import _Launch
from holodeck.tools.mcp._transport import _watched

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult, Tool

log = logging.getLogger("holodeck.tools.mcp")

STDIO_STARTUP_S = 60.0  # `npx -y` / `uvx` may download the server on its first run
HTTP_STARTUP_S = 30.0
CALL_TIMEOUT_S = 300.0
LIST_PAGES = 100
STOP_GRACE_S = 10.0  # the SDK closes stdin, then terminates, then kills: about 4 s at most
_T = TypeVar("_T")


class McpServer:
    """One `type: mcp` entry's server: started on first use, restarted when it stops,
    its calls retried as `retry` says; `close()` stops it."""

    def __init__(self, tool: McpTool, launch: _Launch) -> None:
        self.tool, self.name, self.launch = tool, tool.name, launch
        self.retry = tool.retry or RetryPolicy()
        self.call_timeout = tool.timeout or CALL_TIMEOUT_S
        if launch.transport == "stdio":
            self.startup_timeout = tool.startup_timeout or STDIO_STARTUP_S
        else:  # a call's `timeout` does not bound connecting: that is `startup_timeout`
            self.startup_timeout = tool.startup_timeout or HTTP_STARTUP_S
        self.client: Client | None = None
        self.tools: list[Tool] = []
        self.generation = 0  # counts successful starts: a restart may bring other tools
        self.starts = 0  # connections opened (each a process for stdio servers)
        self.failure: str | None = None
        self._retry_at = 0.0
        self._stderr: IO[bytes] | None = None
        self._bind(None)

    def _bind(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Forget connection state tied to another event loop (one that has ended: its
        tasks were cancelled when it closed, which stopped the server)."""
        self._loop = loop
        self.client = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock: asyncio.Lock | None = None
        self._ending: set[asyncio.Task[None]] = set()  # owners being stopped

    def _on_this_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._bind(loop)

    # -- lifecycle

    async def ready(self) -> bool:
        """Started, or restarted if it stopped; False when it cannot start now (`failure`)."""
        self._on_this_loop()
        if self.alive():
            return True
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.alive():
                return True
            if self.failure is not None and time.monotonic() < self._retry_at:
                return False
            try:
                await self._start_with_retries()
            except McpServerError as exc:
                self.failure = str(exc)
                self._retry_at = time.monotonic() + self.retry.backoff_max_s
                return False
            self.failure = None
            return True

    def alive(self) -> bool:
        owner = self._owner
        return (
            self.client is not None
            and owner is not None
            and not owner.done()
            and not self._stop.is_set()
        )

    async def _start_with_retries(self) -> None:
        attempts = 1 + self.retry.max_retries
        for attempt in range(1, attempts + 1):
            try:
                await self._start()
                return
            except _Permanent as exc:
                raise McpServerError(str(exc)) from None
            except McpServerError:
                if attempt == attempts:
                    raise
            await asyncio.sleep(_backoff(self.retry, attempt))

    async def _start(self) -> None:
        await self._stop_owner()
        self._stop = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._own(ready, self._stop), name=f"mcp-{self.name}")
        try:
            async with asyncio.timeout(self.startup_timeout):
                await asyncio.shield(ready)
        except TimeoutError:
            await self._stop_owner()
            hint = "raise `startup_timeout` if it needs longer"
            if self.tool.server is not None:
                hint += " (the first `npx -y` run downloads the package)"
            raise McpServerError(
                self._say(f"did not start within {self.startup_timeout:g} s", hint)
            ) from None
        except BaseException as exc:
            await self._stop_owner()
            if isinstance(exc, asyncio.CancelledError | _Permanent):
                raise
            raise self._start_error(exc) from None
        self.generation += 1
        self.starts += 1

    async def _own(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """Holds the connection open until `stop` (or until the transport ends)."""
        try:
            async with AsyncExitStack() as stack:
                transport = await self._transport(stack, stop)
                from mcp import Client
                from mcp_types import Implementation

                client = await stack.enter_async_context(
                    Client(
                        transport, client_info=Implementation(name="holodeck", version=__version__)
                    )
                )
                tools = await _list_tools(client)
                self.client, self.tools = client, tools
                ready.set_result(None)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, asyncio.CancelledError):
                    ready.cancel()
                else:
                    ready.set_exception(exc)
            else:
                log.debug("MCP server %s: connection ended: %r", self.name, exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if self._owner is asyncio.current_task():
                self.client = None

    async def _transport(self, stack: AsyncExitStack, stop: asyncio.Event) -> Any:
        launch = self.launch
        if launch.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            found = shutil.which(launch.command, path=launch.env.get("PATH"))
            if found is None and not Path(launch.command).is_file():
                what = "Node.js, which provides npx" if self.tool.server else "it"
                raise _Permanent(
                    self._say(
                        f"cannot run `{launch.command}`: not found",
                        f"install {what}, or fix `command` (a program on PATH, or a path)",
                    )
                )
            if self._stderr is not None:
                self._stderr.close()
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed with the server)
            params = StdioServerParameters(
                command=found or launch.command,
                args=list(launch.args),
                env=dict(launch.env),
                cwd=launch.cwd,
            )
            return _watched(stdio_client(params, errlog=cast(TextIO, self._stderr)), stop)

        headers = dict(launch.headers)
        timeout = httpx2.Timeout(self.startup_timeout, read=max(CALL_TIMEOUT_S, self.call_timeout))
        client = await self._outbound_client()
        if launch.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(
                launch.url,
                headers=headers,
                timeout=self.startup_timeout,
                sse_read_timeout=max(CALL_TIMEOUT_S, self.call_timeout),
                httpx_client_factory=client,
            )
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(client(headers=headers, timeout=timeout))
        return streamable_http_client(launch.url, http_client=http)

    async def _outbound_client(self) -> Callable[..., httpx2.AsyncClient]:
        """How this server's HTTP client is made: as usual for the operator's `url`; for
        an uploaded definition's, one that reaches only what its outbound policy allows
        (checked here first, so a refused `url` fails at once, without retries)."""

        policy = self.launch.outbound
        if policy is None:
            return httpx2.AsyncClient

        url = httpx2.URL(self.launch.url)
        try:
            policy.check_url(self.launch.url)
            await policy.addresses(url.host, url.port or (443 if url.scheme == "https" else 80))
        except OutboundBlocked as exc:
            raise _Permanent(
                self._say(str(exc), "the server's config.yaml `network.allow` decides")
            ) from None
        return partial(checked_client, policy)

    async def _stop_owner(self) -> None:
        """Let the connection go and wait until its process is gone; a second caller
        (a close while a restart stops the old one) waits for the same end."""
        owner, self._owner = self._owner, None
        if owner is not None and not owner.done():
            if self.client is None:  # still starting: nothing to finish, stop it now
                owner.cancel()
            self._stop.set()
            self._ending.add(owner)
        self.client = None
        ending = set(self._ending)
        if ending:
            _, late = await asyncio.wait(ending, timeout=STOP_GRACE_S)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late, timeout=STOP_GRACE_S)
            for task in ending:
                if task.done():
                    self._ending.discard(task)
                    if not task.cancelled():
                        task.exception()  # retrieved: it was logged already

    async def close(self) -> None:
        """Stop the server; it starts again if it is used again."""
        if self._loop is asyncio.get_running_loop():
            await self._stop_owner()
        else:  # its loop has ended, and stopped the server with it
            self._bind(None)
        self.failure = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- calls

    async def call(self, name: str, args: dict[str, Any]) -> CallToolResult:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        attempts = 1 + self.retry.max_retries
        for attempt in range(1, attempts + 1):
            if not await self.ready():
                raise McpServerError(f"MCP server `{self.name}` is unavailable: {self.failure}")
            client, owner, stop = self.client, self._owner, self._stop
            assert client is not None and owner is not None
            try:
                async with asyncio.timeout(self.call_timeout):
                    return await _unless_lost(client.call_tool(name, args), owner)
            except TimeoutError:
                error = McpServerError(
                    f"no result from MCP server `{self.name}` within {self.call_timeout:g} s "
                    "(`timeout`); raise `timeout` if the tool needs longer"
                )
            except MCPError as exc:
                if exc.code != CONNECTION_CLOSED:  # refused: unknown tool, invalid arguments
                    raise McpToolError(
                        f"MCP server `{self.name}` refused `{name}`: {exc.message}"
                    ) from None
                error = self._lost(stop)
            except Exception as exc:
                if _is_cancel_group(exc):
                    raise
                if not _is_connection_failure(exc):  # e.g. a result that is not valid MCP
                    raise McpToolError(
                        f"MCP server `{self.name}`: `{name}` failed: {_explain(exc)}"
                    ) from None
                error = self._lost(stop, exc)
            if attempt == attempts:
                raise error
            await asyncio.sleep(_backoff(self.retry, attempt))
        raise AssertionError("unreachable")

    def _lost(self, stop: asyncio.Event, exc: BaseException | None = None) -> McpServerError:
        stop.set()  # that connection's owner lets go; the next call starts a new one
        if self.launch.transport == "stdio":
            what, then = "stopped during the call", "it is restarted on the next call"
        else:
            what, then = "connection failed during the call", "it reconnects on the next call"
        detail = f": {_explain(exc)}" if exc is not None and not isinstance(exc, _Lost) else ""
        return McpServerError(self._say(f"{what}{detail}", then))

    # -- messages

    def _say(self, what: str, hint: str) -> str:
        tail = self._stderr_tail()
        where = f" ({self.launch.describe()})"
        return (
            f"MCP server `{self.name}`{where} {what}"
            + (f"; it said: {tail}" if tail else "")
            + f"; {hint}"
        )

    def _start_error(self, exc: BaseException) -> McpServerError:
        if isinstance(exc, McpServerError):
            return exc
        detail = _explain(exc)
        if self.launch.transport == "stdio":
            hint = "check `command`/`args`/`env`, and that it speaks MCP on stdin/stdout"
            return McpServerError(self._say(f"exited or failed while starting: {detail}", hint))
        status = _http_status(exc)
        if status in (401, 403):
            hint = "check `headers` (credentials)"
        elif status == 404:
            hint = "check the path in `url`"
        else:
            hint = f"check that it runs and that `url` is right (transport {self.launch.transport})"
        return McpServerError(self._say(f"is unreachable: {detail}", hint))

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            size = os.fstat(self._stderr.fileno()).st_size
            data = os.pread(self._stderr.fileno(), 2000, max(0, size - 2000))
        except (OSError, ValueError):
            return ""
        lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines()]
        return " | ".join([line for line in lines if line][-4:])[-600:]


async def _list_tools(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


async def _unless_lost(call: Awaitable[_T], owner: asyncio.Task[None]) -> _T:
    """`call`'s result, or `_Lost` as soon as the connection's owner ends (a call whose
    server vanished must not wait for an answer that cannot come)."""
    task = asyncio.ensure_future(call)
    try:
        await asyncio.wait({task, owner}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        raise _Lost()
    finally:
        if not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=1.0)


def _backoff(retry: RetryPolicy, attempt: int) -> float:
    delay: float = min(retry.backoff_max_s, retry.backoff_base_s * 2 ** (attempt - 1))
    return delay * random.uniform(0.5, 1.0) if retry.jitter else delay
