"""MCP servers as tools, on the official `mcp` SDK.

    >>> servers = [t for t in spec.tools if isinstance(t, McpTool)]  # doctest: +SKIP
    >>> toolset = mcp_toolset(servers, spec.root, env, spec.source)  # doctest: +SKIP
    >>> await toolset.aclose()  # doctest: +SKIP

Each server (`type: mcp` in agent.yaml, or an image's tools/mcp/*.yaml) is started once per
agent process, on the first turn that needs its tools, and kept until `aclose()` (or the
process exits). Its tools are exposed as `<server>_<tool>`, with schemas rewritten for the
providers (`mcp_schema`). All connections live on one background thread running their own
event loop, so a server outlives the turn (and the event loop) that started it, and every
child process is stopped at exit.

Failures: a server that cannot start (missing command, exits, hangs past
`startup_timeout`, unreachable URL) is logged once as a warning naming it and what to check;
its tools are absent and the agent goes on with the others (`ToolLoadError` only when it
would have no tool at all). It is tried again on a later turn. A stdio server that stops is
restarted on the next call; a call that fails because its server stopped, was unreachable
or gave no answer within `timeout` is retried `retry.max_retries` times with backoff. A tool
that reports an error fails like any other tool (recorded on the event; the model gets "").
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import json
import logging
import os
import random
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TextIO, TypeVar, cast

from pydantic_ai import RunContext
from pydantic_ai.messages import BinaryContent
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from holodeck.spec.tools import McpTool, RetryPolicy
from holodeck.tools.errors import ToolLoadError
from holodeck.tools.mcp_schema import ArgShape, exposed_name, model_schema, strip_nulls

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult, ContentBlock, Tool

log = logging.getLogger("holodeck.tools.mcp")

FILESYSTEM_PACKAGE = "@modelcontextprotocol/server-filesystem"
STDIO_STARTUP_S = 60.0  # `npx -y` / `uvx` may download the server on its first run
HTTP_STARTUP_S = 30.0
CALL_TIMEOUT_S = 300.0
STOP_GRACE_S = 10.0  # the SDK closes stdin, then terminates, then kills: about 6 s at most
LIST_PAGES = 100
_T = TypeVar("_T")
_ARGS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))


class McpServerError(Exception):
    """An MCP server could not be started, reached, or answered in time."""


class McpToolError(Exception):
    """The server ran the tool and it reported an error (`isError`), or refused the call."""


def mcp_toolset(
    tools: Sequence[McpTool],
    root: Path,
    env: Mapping[str, str],
    source: Path | None = None,
    *,
    reserved: Sequence[str] = (),
    alone: bool = False,
) -> McpToolset:
    """The tools of `tools`' servers. `reserved`: names other tools of the agent use;
    `alone`: the agent has no other tool, so no server at all is an error, not a warning."""
    launches = [_launch(tool, root.resolve(), env, source) for tool in tools]
    return McpToolset(
        [_Server(tool, launch) for tool, launch in zip(tools, launches, strict=True)],
        source=source,
        reserved=reserved,
        alone=alone,
    )


# ---------------------------------------------------------------------------------------
# How to start or reach a server


@dataclass(frozen=True)
class _Launch:
    transport: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])
        return self.url


def _launch(tool: McpTool, root: Path, env: Mapping[str, str], source: Path | None) -> _Launch:
    def refuse(message: str) -> ToolLoadError:
        return ToolLoadError(f"MCP server `{tool.name}`: {message}", source)

    transport = tool.effective_transport
    if tool.url is not None:
        if tool.config:
            raise refuse(
                "`config` is understood for stdio servers only; pass settings "
                "to an HTTP server in its `url` or `headers`"
            )
        headers = {k: v.get_secret_value() for k, v in tool.headers.items()}
        unexpanded = [f"header `{k}`" for k, v in headers.items() if "${" in v]
        if "${" in tool.url:
            unexpanded.insert(0, f"`url` {tool.url}")
        if unexpanded:  # loaded without expanding variables (--no-env)
            raise refuse(f"{', '.join(unexpanded)} still hold(s) an unexpanded ${{VAR}}; set it")
        return _Launch(transport, url=tool.url, headers=headers)
    if tool.server is not None:
        command, args = "npx", ["-y", tool.server, *tool.args]
    else:
        assert tool.command is not None
        command, args = tool.command, list(tool.args)
        if "/" in command and not Path(command).is_absolute():
            command = str(root / command)
    args += _config_args(tool, root, refuse)
    return _Launch(transport, command=command, args=tuple(args), env={**env, **tool.env}, cwd=root)


def _config_args(tool: McpTool, root: Path, refuse: Callable[[str], ToolLoadError]) -> list[str]:
    """`config` of the servers it is defined for: the filesystem server's
    `allowed_directories` become its arguments (relative ones from the agent's directory)."""
    if not tool.config:
        return []
    package = tool.server or next((a for a in tool.args if FILESYSTEM_PACKAGE in a), "")
    if _package_name(package) != FILESYSTEM_PACKAGE:
        raise refuse(
            f"`config` is only understood for {FILESYSTEM_PACKAGE} (allowed_directories); "
            "pass settings to other servers with `args` or `env`"
        )
    unknown = sorted(set(tool.config) - {"allowed_directories"})
    if unknown:
        raise refuse(f"unknown `config` key(s) {', '.join(unknown)}; known: allowed_directories")
    listed = tool.config.get("allowed_directories")
    dirs = [listed] if isinstance(listed, str) else listed
    if not isinstance(dirs, list) or not dirs or not all(isinstance(d, str) and d for d in dirs):
        raise refuse("`config.allowed_directories` must be a directory or a list of them")
    resolved = [(root / Path(d).expanduser()).resolve() for d in dirs]
    for path in resolved:
        if not path.is_dir():
            raise refuse(f"allowed directory not found: {path}; create it or fix the path")
    return [str(p) for p in resolved]


def _package_name(spec: str) -> str:
    """`@scope/name@1.2` -> `@scope/name`."""
    if spec.startswith("@"):
        return "@" + spec[1:].split("@", 1)[0]
    return spec.split("@", 1)[0]


# ---------------------------------------------------------------------------------------
# The thread every connection lives on


class _Host:
    """An event loop on a daemon thread, owning every MCP connection of the process."""

    _lock = threading.Lock()
    _current: _Host | None = None

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.servers: set[_Server] = set()  # those with a connection open
        started = threading.Event()
        self.thread = threading.Thread(
            target=self._run, args=(started,), name="holodeck-mcp", daemon=True
        )
        self.thread.start()
        started.wait()

    @classmethod
    def get(cls) -> _Host:
        with cls._lock:
            if cls._current is None or not cls._current.thread.is_alive():
                if cls._current is None:
                    atexit.register(cls.shutdown)
                cls._current = _Host()
            return cls._current

    def _run(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(started.set)
        self.loop.run_forever()

    async def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run `coro` on the host loop and wait for it from the caller's loop; cancelling
        the caller cancels it there."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def run_soon(self, coro: Coroutine[Any, Any, Any]) -> None:
        if self.loop.is_running():
            asyncio.run_coroutine_threadsafe(coro, self.loop)
        else:
            coro.close()

    @classmethod
    def shutdown(cls, timeout: float = STOP_GRACE_S + 5) -> None:
        """At exit: stop every server still running (no orphaned child processes)."""
        host = cls._current
        if host is None or not host.loop.is_running():
            return
        servers = list(host.servers)
        if servers:
            stopping = asyncio.run_coroutine_threadsafe(_close_all(servers), host.loop)
            try:
                stopping.result(timeout)
            except Exception:  # a server that cannot be stopped must not block the exit
                log.debug("MCP servers not all stopped at exit", exc_info=True)


async def _close_all(servers: Sequence[_Server]) -> None:
    await asyncio.gather(*(s.close() for s in servers), return_exceptions=True)


# ---------------------------------------------------------------------------------------
# One server's connection (every method runs on the host loop)


class _Lost(Exception):
    """The connection ended while a call waited for its answer."""


class _Server:
    def __init__(self, tool: McpTool, launch: _Launch) -> None:
        self.tool, self.name, self.launch = tool, tool.name, launch
        self.retry = tool.retry or RetryPolicy()
        self.call_timeout = tool.timeout or CALL_TIMEOUT_S
        if launch.transport == "stdio":
            self.startup_timeout = tool.startup_timeout or STDIO_STARTUP_S
        else:  # an image's `timeout` covers the connection too
            self.startup_timeout = tool.startup_timeout or tool.timeout or HTTP_STARTUP_S
        self.client: Client | None = None
        self.tools: list[Tool] = []
        self.generation = 0  # counts successful starts: a restart may bring other tools
        self.failure: str | None = None
        self._retry_at = 0.0
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock: asyncio.Lock | None = None
        self._stderr: IO[bytes] | None = None
        self._ending: set[asyncio.Task[None]] = set()  # owners being stopped

    # -- lifecycle

    async def ready(self) -> bool:
        """Started, or restarted if it stopped; False when it cannot start now (`failure`)."""
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
        _Host.get().servers.add(self)

    async def _own(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """Holds the connection open until `stop` (or until the transport ends)."""
        try:
            async with AsyncExitStack() as stack:
                transport = await self._transport(stack, stop)
                from mcp import Client
                from mcp_types import Implementation

                from holodeck._version import __version__

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
        import httpx2

        headers = dict(launch.headers)
        timeout = httpx2.Timeout(self.startup_timeout, read=max(CALL_TIMEOUT_S, self.call_timeout))
        if launch.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(
                launch.url,
                headers=headers,
                timeout=self.startup_timeout,
                sse_read_timeout=max(CALL_TIMEOUT_S, self.call_timeout),
            )
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=timeout))
        return streamable_http_client(launch.url, http_client=http)

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
        _Host.get().servers.discard(self)

    async def close(self) -> None:
        """Stop the server; it starts again if it is used again."""
        await self._stop_owner()
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


class _Permanent(Exception):
    """A start failure that trying again cannot fix."""


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


@asynccontextmanager
async def _watched(transport: Any, stop: asyncio.Event) -> AsyncIterator[Any]:
    """`transport`, with its end (the server process exited) setting `stop`."""
    async with transport as (read, write):
        yield _EndAware(read, stop.set), write


class _EndAware:
    def __init__(self, stream: Any, on_end: Callable[[], None]) -> None:
        self._stream, self._on_end = stream, on_end

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _EndAware:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._stream.__anext__()
        except StopAsyncIteration:
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _EndAware:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._stream.__aexit__(*exc)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _backoff(retry: RetryPolicy, attempt: int) -> float:
    delay: float = min(retry.backoff_max_s, retry.backoff_base_s * 2 ** (attempt - 1))
    return delay * random.uniform(0.5, 1.0) if retry.jitter else delay


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _is_cancel_group(exc: BaseException) -> bool:
    leaves = _leaves(exc)
    return bool(leaves) and all(isinstance(e, asyncio.CancelledError) for e in leaves)


def _is_connection_failure(exc: BaseException) -> bool:
    """The connection broke (process gone, pipe or socket closed, HTTP failed): a new
    connection may succeed where this one cannot."""
    import anyio
    import httpx2

    broken = (
        _Lost,
        OSError,
        EOFError,
        anyio.ClosedResourceError,
        anyio.BrokenResourceError,
        anyio.EndOfStream,
        httpx2.TransportError,
        httpx2.HTTPStatusError,
    )
    return any(isinstance(leaf, broken) for leaf in _leaves(exc))


def _explain(exc: BaseException) -> str:
    leaves = [e for e in _leaves(exc) if not isinstance(e, asyncio.CancelledError)] or [exc]
    first = leaves[0]
    status = _http_status(first)
    if status is not None:
        return f"HTTP {status}"
    text = str(first).strip() or type(first).__name__
    return text if text.startswith(type(first).__name__) else f"{type(first).__name__}: {text}"


def _http_status(exc: BaseException) -> int | None:
    for leaf in _leaves(exc):
        response = getattr(leaf, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            return status
    return None


# ---------------------------------------------------------------------------------------
# The toolset the agent sees


@dataclass(frozen=True)
class _Entry:
    server: _Server
    original: str
    definition: ToolDefinition
    shape: ArgShape | None


class McpToolset(AbstractToolset[Any]):
    """The tools of several MCP servers. Servers start on first use and stay up until
    `aclose()`; entering and leaving the toolset (each run) does not stop them."""

    def __init__(
        self,
        servers: Sequence[_Server],
        *,
        source: Path | None = None,
        reserved: Sequence[str] = (),
        alone: bool = False,
    ) -> None:
        self._servers = list(servers)
        self._source = source
        self._reserved = set(reserved)
        self._alone = alone
        self._entries: dict[str, _Entry] = {}  # every tool offered so far, by exposed name
        self._built: dict[str, tuple[Any, list[_Entry]]] = {}
        self._reported: dict[str, str] = {}
        # dropped without aclose(): stop its servers; at exit _Host.shutdown does (and waits)
        weakref.finalize(self, _close_later, tuple(self._servers)).atexit = False

    @property
    def id(self) -> str | None:
        return "holodeck-mcp"

    @property
    def servers(self) -> list[str]:
        return [s.name for s in self._servers]

    def running(self) -> dict[str, bool]:
        """Whether each server has a live connection (False before its first use)."""
        return {s.name: s.alive() for s in self._servers}

    def unavailable(self) -> dict[str, str]:
        """Servers that could not be started, with the reason."""
        return {s.name: s.failure for s in self._servers if s.failure is not None}

    async def aclose(self) -> None:
        """Stop every server of this toolset (idempotent)."""
        await _Host.get().run(_close_all(self._servers))

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        await _Host.get().run(_ready_all(self._servers))
        self._report()
        taken = set(self._reserved)
        entries: dict[str, _Entry] = {}
        for server in self._servers:
            if server.failure is not None or server.client is None:
                continue
            key = (server.generation, frozenset(taken))  # names depend on those before
            built = self._built.get(server.name)
            if built is None or built[0] != key:
                built = (key, self._entries_of(server, taken))
                self._built[server.name] = built
            for entry in built[1]:
                taken.add(entry.definition.name)
                entries[entry.definition.name] = entry
        self._entries.update(entries)
        return {
            name: ToolsetTool(
                toolset=self,
                tool_def=e.definition,
                max_retries=ctx.max_retries,
                args_validator=_ARGS,
            )
            for name, e in entries.items()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        entry = self._entries[name]
        args = strip_nulls(tool_args, entry.shape)
        result = await _Host.get().run(entry.server.call(entry.original, args))
        return model_content(result, f"{entry.server.name}/{entry.original}")

    def _entries_of(self, server: _Server, taken: set[str]) -> list[_Entry]:
        offered = {t.name: t for t in server.tools}
        wanted = server.tool.tools
        if wanted is not None:
            missing = [w for w in wanted if w not in offered]
            if missing:
                log.warning(
                    "MCP server `%s` has no tool %s (listed in `tools:`); it offers: %s",
                    server.name,
                    ", ".join(f"`{m}`" for m in missing),
                    ", ".join(sorted(offered)) or "none",
                )
        entries: list[_Entry] = []
        names = set(taken)
        for mcp_tool in server.tools:
            if wanted is not None and mcp_tool.name not in wanted:
                continue
            name = exposed_name(server.name, mcp_tool.name, names)
            names.add(name)
            schema = model_schema(mcp_tool.input_schema)
            description = mcp_tool.description or mcp_tool.title or mcp_tool.name
            if server.tool.description:
                description += f"\n\n(MCP server `{server.name}`: {server.tool.description})"
            definition = ToolDefinition(
                name=name,
                description=description,
                parameters_json_schema=schema.schema,
                strict=None if schema.strict_ok else False,
                metadata={"mcp_server": server.name, "mcp_tool": mcp_tool.name},
            )
            entries.append(_Entry(server, mcp_tool.name, definition, schema.shape))
        return entries

    def _report(self) -> None:
        """Each failure once; and, when all servers failed and the agent has nothing
        else, a ToolLoadError."""
        for server in self._servers:
            failure = server.failure
            if failure is None:
                if self._reported.pop(server.name, None) is not None:
                    log.info("MCP server `%s` is available again", server.name)
            elif self._reported.get(server.name) != failure:
                self._reported[server.name] = failure
                log.warning("%s; its tools are unavailable for now", failure)
        if self._alone and self._servers and all(s.failure for s in self._servers):
            reasons = "; ".join(str(s.failure) for s in self._servers)
            raise ToolLoadError(f"no tools: every MCP server failed: {reasons}", self._source)


async def _ready_all(servers: Sequence[_Server]) -> None:
    await asyncio.gather(*(s.ready() for s in servers))


def _close_later(servers: Sequence[_Server]) -> None:
    host = _Host._current
    if host is not None:
        host.run_soon(_close_all(servers))


# ---------------------------------------------------------------------------------------
# Results the model can read


def model_content(result: CallToolResult, where: str = "") -> Any:
    """A tool result as the model should see it: `structuredContent` when given (alone, or
    first beside images and files), else each content block: text (JSON text parsed),
    images and audio as binary content, embedded resources as their text or file, links
    as a description. An error result raises `McpToolError` with its text."""
    from mcp_types import TextContent

    blocks = [_block(b) for b in result.content]
    if result.is_error:
        text = " ".join(
            b if isinstance(b, str) else json.dumps(b, default=str)
            for b in blocks
            if not isinstance(b, BinaryContent)
        )
        if not text and result.structured_content is not None:
            text = json.dumps(result.structured_content, default=str)
        raise McpToolError(text or f"{where or 'the tool'} reported an error")
    structured = result.structured_content
    if structured is not None:
        if isinstance(structured, dict) and set(structured) == {"result"}:
            structured = structured["result"]  # the SDKs wrap non-object results so
        others = [
            b
            for b, raw in zip(blocks, result.content, strict=True)
            if not isinstance(raw, TextContent)
        ]
        return [structured, *others] if others else structured
    if not blocks:
        return ""
    return blocks[0] if len(blocks) == 1 else blocks


def _block(block: ContentBlock) -> Any:
    from mcp_types import (
        AudioContent,
        BlobResourceContents,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
    )

    if isinstance(block, TextContent):
        text = block.text
        if text.lstrip().startswith(("{", "[")):
            try:
                return json.loads(text)
            except ValueError:
                pass
        return text
    if isinstance(block, ImageContent | AudioContent):
        return BinaryContent(data=base64.b64decode(block.data), media_type=block.mime_type)
    if isinstance(block, ResourceLink):
        link = {
            "resource_link": block.uri,
            "name": block.name,
            "description": block.description,
            "mime_type": block.mime_type,
        }
        return {k: v for k, v in link.items() if v is not None}
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        mime = resource.mime_type or ""
        if not isinstance(resource, BlobResourceContents):
            return {"resource": resource.uri, "text": resource.text}
        data = base64.b64decode(resource.blob)
        if mime.startswith(("image/", "audio/")) or mime == "application/pdf":
            return BinaryContent(data=data, media_type=mime)
        if mime.startswith("text/") or mime.endswith(("json", "xml", "yaml", "javascript")):
            return {"resource": resource.uri, "text": data.decode("utf-8", "replace")}
        return {
            "resource": resource.uri,
            "mime_type": mime or "application/octet-stream",
            "bytes": len(data),
            "note": "binary content, not shown",
        }
    return str(block)
