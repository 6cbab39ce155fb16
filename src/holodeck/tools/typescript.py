"""TypeScript function tools, run with Node.js.

The schema the model sees comes from each function's TypeScript types, read with the
official compiler's type checker (parameters, literal unions as enums, arrays, nested
objects, optional parameters, JSDoc `@param` text). Calls run in one long-lived Node.js
process per toolset: started on first use, restarted if it died, killed when the
toolset exits. Requests and answers are JSON lines matched by id, so calls can overlap.

The Node.js side is `node/harness.cjs`. It needs the `typescript` npm package, found in
`$HOLODECK_NODE_MODULES`, else in `node/node_modules` (a developer checkout after
`npm install --prefix src/holodeck/tools/node`), else installed once with npm under
`$HOLODECK_HOME/node` (`~/.holodeck/node`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import json
import logging
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from holodeck.spec.tools import TypeScriptTool
from holodeck.tools.errors import ToolLoadError

log = logging.getLogger("holodeck.tools.typescript")

NODE_MODULES_ENV = "HOLODECK_NODE_MODULES"
NEEDS_NODE = "TypeScript tools need Node.js 18+ on PATH"
MIN_NODE_MAJOR = 18
START_TIMEOUT_S = 60.0  # the first answer of a new process (it loads the compiler)
PING_TIMEOUT_S = 1.0  # after a call timed out: is the process still answering?
INSTALL_TIMEOUT_S = 600.0
INSTALLED_MARKER = ".holodeck-installed"

_ARGS_VALIDATOR = SchemaValidator(
    core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())
)
_PERMISSIVE_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": True}


class TypeScriptToolError(Exception):
    """A TypeScript tool threw; the message is the JavaScript error's message."""

    def __init__(self, message: str, js_name: str = "Error", stack: str = "") -> None:
        super().__init__(message)
        self.js_name = js_name
        self.stack = stack


class NodeProcessError(RuntimeError):
    """The Node.js process running the tools stopped, or never started."""


class _NotSent(NodeProcessError):
    """The process had already stopped: the request never reached it (safe to resend)."""


class _TimedOut(Exception):
    def __init__(self, process: _NodeProcess) -> None:
        super().__init__()
        self.process = process


def typescript_toolset(
    tools: Sequence[TypeScriptTool], root: Path, params: Mapping[str, Any]
) -> AbstractToolset[Any]:
    """A toolset running `tools` (files relative to `root`) with Node.js.

    A parameter named `params` receives the image's `params` and is not in the schema.
    """
    return TypeScriptToolset(tools, root, params)


# ---------------------------------------------------------------------------------------
# The toolset


@dataclass(frozen=True)
class _Described:
    tool: TypeScriptTool
    path: Path
    definition: ToolDefinition
    layout: list[dict[str, Any]] | None  # how named arguments map onto the JS parameters


class TypeScriptToolset(AbstractToolset[Any]):
    """TypeScript functions as tools, all served by one Node.js process."""

    def __init__(
        self,
        tools: Sequence[TypeScriptTool],
        root: Path,
        params: Mapping[str, Any],
        *,
        node: str | None = None,
        toolset_id: str | None = None,
    ) -> None:
        self.root = root.resolve()
        self._tools: dict[str, tuple[TypeScriptTool, Path]] = {}
        for tool in tools:
            path = (self.root / tool.file).resolve()
            if tool.name in self._tools:
                raise ToolLoadError(f"two TypeScript tools are named `{tool.name}`", path)
            if not path.is_file():
                raise ToolLoadError("TypeScript file not found", path)
            self._tools[tool.name] = (tool, path)
        found = node or shutil.which("node")
        if found is None:
            first = next(iter(self._tools.values()), None)
            raise ToolLoadError(
                f"{NEEDS_NODE}; `node` was not found (install it from https://nodejs.org)",
                first[1] if first else None,
            )
        self._node = found
        self._params = dict(params)
        self._id = toolset_id
        self._lock = threading.Lock()
        self._process: _NodeProcess | None = None
        self._described: dict[str, _Described] | None = None
        self._entered = 0
        self._busy = 0

    @property
    def id(self) -> str | None:
        return self._id

    @property
    def process_id(self) -> int | None:
        """The id of the running Node.js process, if one runs."""
        process = self._process
        return process.pid if process is not None and process.alive else None

    async def __aenter__(self) -> TypeScriptToolset:
        self._entered += 1
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        self._entered = max(0, self._entered - 1)
        if self._entered == 0:
            self.close()
        return None

    def close(self) -> None:
        """Kill the Node.js process (and anything it started); calls in flight fail."""
        with self._lock:
            process, self._process = self._process, None
        if process is not None:
            process.stop("the TypeScript toolset was closed")

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        with self._use():
            described = await self._describe()
        return {
            name: ToolsetTool(
                toolset=self,
                tool_def=entry.definition,
                max_retries=ctx.max_retries,
                args_validator=_ARGS_VALIDATOR,
            )
            for name, entry in described.items()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        with self._use():
            entry = (await self._describe())[name]
            required = entry.definition.parameters_json_schema.get("required", [])
            missing = [key for key in required if key not in tool_args]
            if missing:
                raise ModelRetry(f"missing required argument(s): {', '.join(missing)}")
            request = {
                "op": "call",
                "file": str(entry.path),
                "function": entry.tool.function,
                "layout": entry.layout,
                "args": tool_args,
                "params": self._params,
            }
            timeout = entry.tool.timeout
            try:
                return await self._request(request, timeout)
            except _TimedOut as timed_out:
                await self._unblock(timed_out.process, name)
                raise TimeoutError(
                    f"TypeScript tool `{name}` ({entry.tool.file}) did not finish "
                    f"within {timeout:g} s"
                ) from None

    @contextlib.contextmanager
    def _use(self) -> Iterator[None]:
        """Outside `async with`, the process lives only while it is used."""
        self._busy += 1
        try:
            yield
        finally:
            self._busy -= 1
            if self._entered == 0 and self._busy == 0:
                self.close()

    async def _describe(self) -> dict[str, _Described]:
        if self._described is not None:
            return self._described
        by_file: dict[Path, list[str]] = {}
        for tool, path in self._tools.values():
            functions = by_file.setdefault(path, [])
            if tool.function not in functions:
                functions.append(tool.function)
        request = {
            "op": "describe",
            "files": [{"file": str(path), "functions": names} for path, names in by_file.items()],
        }
        try:
            answer = await self._request(request, START_TIMEOUT_S)
        except (TypeScriptToolError, NodeProcessError, _TimedOut) as exc:
            problem = "no answer in time" if isinstance(exc, _TimedOut) else str(exc)
            first = next(iter(by_file), None)
            raise ToolLoadError(f"cannot read the TypeScript types: {problem}", first) from None
        described: dict[str, _Described] = {}
        for name, (tool, path) in self._tools.items():
            described[name] = _definition(name, tool, path, answer.get(str(path)) or {})
        self._described = described
        return described

    async def _request(self, message: Mapping[str, Any], timeout: float | None) -> Any:
        """Send `message` to the running process; resent once to a new process if the
        old one had died before it could be sent. A timeout raises _TimedOut."""
        for attempt in (1, 2):
            process = await self._running()
            try:
                return await process.request(message, timeout)
            except _NotSent:
                if attempt == 2:
                    raise
            except TimeoutError:
                raise _TimedOut(process) from None
        raise AssertionError("unreachable")

    async def _running(self) -> _NodeProcess:
        """The Node.js process, started (or restarted) if needed."""
        process = self._process
        if process is None or not process.alive:
            typescript = await asyncio.to_thread(typescript_package)
            with self._lock:
                process = self._process
                if process is None or not process.alive:
                    if process is not None:
                        process.stop("restarted")
                    process = _NodeProcess(self._node, _harness(), typescript, self.root)
                    self._process = process
        if not process.greeted:
            await self._greet(process)
        return process

    async def _greet(self, process: _NodeProcess) -> None:
        try:
            hello = await process.request({"op": "hello"}, START_TIMEOUT_S)
        except (TypeScriptToolError, NodeProcessError, TimeoutError) as exc:
            self._forget(process, "it did not start")
            raise ToolLoadError(f"{NEEDS_NODE}; `{self._node}` could not start: {exc}") from None
        version = str(hello.get("node", "")) if isinstance(hello, dict) else ""
        major = version.split(".", 1)[0]
        if not major.isdigit() or int(major) < MIN_NODE_MAJOR:
            self._forget(process, "its Node.js is too old")
            raise ToolLoadError(f"{NEEDS_NODE}; `{self._node}` is version {version or '?'}")
        if hello.get("typescript_error"):
            self._forget(process, "it cannot load the TypeScript compiler")
            raise ToolLoadError(
                f"cannot load the `typescript` npm package: {hello['typescript_error']}; "
                f"reinstall it, or set {NODE_MODULES_ENV} to a node_modules directory holding it"
            )
        process.greeted = True

    async def _unblock(self, process: _NodeProcess, name: str) -> None:
        """After a timeout: a call still running is abandoned, but a process blocked by
        it (a synchronous endless loop) is killed; the next call starts a new one."""
        try:
            await process.request({"op": "ping"}, PING_TIMEOUT_S)
        except (TimeoutError, NodeProcessError):
            log.warning("TypeScript tool %s blocked Node.js; restarting it", name)
            self._forget(process, f"tool `{name}` timed out and blocked Node.js")

    def _forget(self, process: _NodeProcess, reason: str) -> None:
        with self._lock:
            if self._process is process:
                self._process = None
        process.stop(f"the Node.js process was stopped: {reason}")


def _definition(name: str, tool: TypeScriptTool, path: Path, answer: dict[str, Any]) -> _Described:
    if "error" in answer:
        raise ToolLoadError(f"cannot be read as TypeScript: {answer['error']}", path)
    function = (answer.get("functions") or {}).get(tool.function)
    if not isinstance(function, dict):
        function = {"missing": f"exports no function `{tool.function}`"}
    if "missing" in function:
        raise ToolLoadError(str(function["missing"]), path)
    if function.get("warning"):
        log.warning("%s: types of `%s` not read: %s", path, tool.function, function["warning"])
    parameters = function.get("parameters")
    description = tool.description or _summary(function.get("description"))
    definition = ToolDefinition(
        name=name,
        parameters_json_schema=parameters if isinstance(parameters, dict) else _PERMISSIVE_OBJECT,
        description=description,
        metadata={"file": tool.file, "function": tool.function},
    )
    layout = function.get("layout")
    return _Described(tool, path, definition, layout if isinstance(layout, list) else None)


def _summary(doc: Any) -> str | None:
    """The first paragraph of a JSDoc comment, as the tool's description."""
    if not isinstance(doc, str) or not doc.strip():
        return None
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ").strip() or None


# ---------------------------------------------------------------------------------------
# The Node.js process

_LIVE: weakref.WeakSet[_NodeProcess] = weakref.WeakSet()


class _NodeProcess:
    """One running harness. A writer thread feeds stdin; a reader thread settles each
    request's future (on whichever event loop made it) when its answer arrives."""

    def __init__(self, node: str, harness: Path, typescript: Path, cwd: Path) -> None:
        env = dict(os.environ, HOLODECK_TYPESCRIPT=str(typescript))
        try:
            self.popen = subprocess.Popen(
                [node, str(harness)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=env,
                # its own process group: stopping it also stops whatever a tool started
                start_new_session=os.name == "posix",
            )
        except OSError as exc:
            raise ToolLoadError(f"{NEEDS_NODE}; cannot run `{node}`: {exc}") from None
        self.greeted = False
        self._pending: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._stderr: deque[str] = deque(maxlen=20)
        self._stopped: str | None = None
        self._eof = False  # stdout closed: the process is gone or going
        self._stderr_reader = self._thread(self._read_stderr, "stderr")
        self._thread(self._read_stdout, "stdout")
        self._thread(self._write_stdin, "stdin")
        _LIVE.add(self)

    def _thread(self, target: Any, role: str) -> threading.Thread:
        thread = threading.Thread(
            target=target, name=f"holodeck-node-{self.popen.pid}-{role}", daemon=True
        )
        thread.start()
        return thread

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def alive(self) -> bool:
        return self._stopped is None and not self._eof and self.popen.poll() is None

    async def request(self, message: Mapping[str, Any], timeout: float | None = None) -> Any:
        """Send one request and wait for its answer; a JS error raises TypeScriptToolError."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            if self._stopped is not None or self._eof:
                raise _NotSent(self._stopped or "Node.js exited")
            request_id = next(self._ids)
            line = json.dumps({"id": request_id, **message}, default=str, allow_nan=False) + "\n"
            self._pending[request_id] = (loop, future)
        self._outbox.put(line.encode())
        try:
            if timeout is None:
                return await future
            return await asyncio.wait_for(future, timeout)
        finally:
            with self._lock:
                self._pending.pop(request_id, None)

    def stop(self, reason: str) -> None:
        """Kill the process group and fail every pending request with `reason`."""
        with self._lock:
            if self._stopped is None:
                self._stopped = reason
        if self.popen.returncode is None:  # not reaped yet: its pid is still its own
            with contextlib.suppress(OSError):
                if os.name == "posix":
                    os.killpg(self.popen.pid, signal.SIGKILL)
                else:
                    self.popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)
        self._fail_all(reason)
        _LIVE.discard(self)

    def _write_stdin(self) -> None:
        stdin = self.popen.stdin
        assert stdin is not None
        while (data := self._outbox.get()) is not None:
            try:
                stdin.write(data)
                stdin.flush()
            except (OSError, ValueError):
                break
        with contextlib.suppress(OSError, ValueError):
            stdin.close()

    def _read_stdout(self) -> None:
        stdout = self.popen.stdout
        assert stdout is not None
        for raw in stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                log.debug("node: unreadable answer %r", raw[:200])
                continue
            if not isinstance(message, dict) or not isinstance(message.get("id"), int):
                continue
            with self._lock:
                waiting = self._pending.pop(message["id"], None)
            if waiting is not None:
                loop, future = waiting
                with contextlib.suppress(RuntimeError):  # that event loop is closed
                    loop.call_soon_threadsafe(_settle, future, message)
        with self._lock:
            self._eof = True
        self._fail_all(self._stopped or self._exit_reason())

    def _read_stderr(self) -> None:
        stderr = self.popen.stderr
        assert stderr is not None
        for raw in stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self._stderr.append(line)
                log.info("node: %s", line)

    def _exit_reason(self) -> str:
        code: int | None = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = self.popen.wait(timeout=5)
        self._stderr_reader.join(timeout=2)
        tail = " | ".join(list(self._stderr)[-5:])
        reason = f"Node.js exited with code {code}" if code is not None else "Node.js stopped"
        return f"{reason}: {tail}" if tail else reason

    def _fail_all(self, reason: str) -> None:
        with self._lock:
            if self._stopped is None:
                self._stopped = reason
            waiting = list(self._pending.values())
            self._pending.clear()
        for loop, future in waiting:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_fail, future, NodeProcessError(reason))
        self._outbox.put(None)


def _settle(future: asyncio.Future[Any], message: dict[str, Any]) -> None:
    if future.done():
        return
    error = message.get("error")
    if error is None:
        future.set_result(message.get("result"))
        return
    if not isinstance(error, dict):
        error = {"message": str(error)}
    text = str(error.get("message") or error.get("name") or "the tool failed")
    future.set_exception(
        TypeScriptToolError(text, str(error.get("name") or "Error"), str(error.get("stack") or ""))
    )


def _fail(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


@atexit.register
def _stop_all() -> None:
    for process in list(_LIVE):
        process.stop("the interpreter is exiting")


# ---------------------------------------------------------------------------------------
# Finding Node.js's side: the harness and the `typescript` package


def _harness() -> Path:
    resource = files("holodeck.tools").joinpath("node", "harness.cjs")
    if isinstance(resource, Path):
        return resource
    # installed somewhere Node.js cannot read from (a zip): copy it out once
    target = _cache_prefix(os.environ) / "harness.cjs"
    data = resource.read_bytes()
    if not target.is_file() or target.read_bytes() != data:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return target


def _bundled_node_modules() -> Path | None:
    """node/node_modules next to the harness: a developer checkout after `make node`."""
    resource = files("holodeck.tools").joinpath("node", "node_modules")
    return resource if isinstance(resource, Path) and resource.is_dir() else None


def typescript_version_spec() -> str:
    """The `typescript` version range declared in node/package.json."""
    manifest = json.loads(files("holodeck.tools").joinpath("node", "package.json").read_text())
    return str(manifest["dependencies"]["typescript"])


def typescript_package(environ: Mapping[str, str] | None = None) -> Path:
    """The directory of the `typescript` npm package, installed on first need.

    Blocking (an install takes seconds): call it from a thread inside async code.
    """
    env = os.environ if environ is None else environ
    configured = env.get(NODE_MODULES_ENV)
    if configured:
        package = Path(configured).expanduser() / "typescript"
        if not (package / "package.json").is_file():
            raise ToolLoadError(
                f"{NODE_MODULES_ENV}={configured} holds no `typescript` package: point it at a "
                f"node_modules directory, e.g. after `npm install --prefix DIR typescript@5` "
                "use DIR/node_modules"
            )
        return package
    bundled = _bundled_node_modules()
    if bundled is not None and (bundled / "typescript" / "package.json").is_file():
        return bundled / "typescript"
    return _installed_typescript(_cache_prefix(env))


def _cache_prefix(env: Mapping[str, str]) -> Path:
    from holodeck.config.settings import holodeck_home

    return holodeck_home(env) / "node"


def _installed(prefix: Path) -> bool:
    package = prefix / "node_modules" / "typescript" / "package.json"
    return package.is_file() and (prefix / INSTALLED_MARKER).is_file()


def _installed_typescript(prefix: Path) -> Path:
    package = prefix / "node_modules" / "typescript"
    if _installed(prefix):
        return package
    npm = shutil.which("npm")
    if npm is None:
        raise ToolLoadError(
            "TypeScript tools need the `typescript` npm package and npm is not on PATH to "
            f"install it: install Node.js 18+ with npm, or set {NODE_MODULES_ENV} to a "
            "node_modules directory holding `typescript`"
        )
    prefix.mkdir(parents=True, exist_ok=True)
    with _file_lock(prefix / ".install.lock"):
        if not _installed(prefix):  # another process may have installed it meanwhile
            _npm_install(npm, prefix, f"typescript@{typescript_version_spec()}")
    return package


def _npm_install(npm: str, prefix: Path, requirement: str) -> None:
    command = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), requirement]
    log.warning("installing the TypeScript compiler for TypeScript tools into %s", prefix)
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            cwd=prefix,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolLoadError(f"`{' '.join(command)}` failed: {exc}") from None
    output = (done.stderr or done.stdout or "").strip().splitlines()[-5:]
    if done.returncode != 0 or not (prefix / "node_modules" / "typescript").is_dir():
        raise ToolLoadError(
            f"`{' '.join(command)}` failed (exit code {done.returncode}): "
            + (" | ".join(output) or "no output")
            + f"; install it yourself, or set {NODE_MODULES_ENV}"
        )
    (prefix / INSTALLED_MARKER).write_text(requirement + "\n", encoding="utf-8")
    log.info("installed %s in %.1f s", requirement, time.perf_counter() - started)


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between processes (and threads) while the block runs."""
    with path.open("a+b") as handle:
        if sys.platform == "win32":
            import msvcrt

            handle.seek(0)
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
                    break
                except OSError:  # LK_LOCK gives up after 10 s; keep waiting
                    continue
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
