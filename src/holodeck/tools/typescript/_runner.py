"""A definition's TypeScript tools run: schemas from the TypeScript compiler, calls in one
Node.js process (see the package's docstring). The runtime offers them to the model
(`holodeck.runtime.toolsets`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holodeck.errors import ToolError
from holodeck.spec.models.tools import TypeScriptTool
from holodeck.tools.errors import ToolLoadError
from holodeck.tools.typescript._install import (
    NODE_MODULES_ENV,
    _harness,
    typescript_package,
)
from holodeck.tools.typescript._process import (
    NEEDS_NODE,
    NodeProcessError,
    TypeScriptToolError,
    _NodeProcess,
    _NotSent,
)

log = logging.getLogger("holodeck.tools.typescript")

MIN_NODE_MAJOR = 18
START_TIMEOUT_S = 60.0  # the first answer of a new process (it loads the compiler)
PING_TIMEOUT_S = 1.0  # after a call timed out: is the process still answering?

_PERMISSIVE_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": True}


class _TimedOut(Exception):
    def __init__(self, process: _NodeProcess) -> None:
        super().__init__()
        self.process = process


class MissingArguments(ToolError):
    """A call lacks arguments the function requires (the model should call again)."""


@dataclass(frozen=True)
class Described:
    """One tool as its TypeScript types describe it."""

    tool: TypeScriptTool
    path: Path
    name: str
    parameters: dict[str, Any]  # JSON Schema of the named arguments
    description: str | None
    layout: list[dict[str, Any]] | None  # how named arguments map onto the JS parameters

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required", []))


class TypeScriptRunner:
    """TypeScript functions run by one Node.js process: started on first use, restarted
    when it died or a call blocked it."""

    def __init__(
        self,
        tools: Sequence[TypeScriptTool],
        root: Path,
        params: Mapping[str, Any],
        *,
        node: str | None = None,
        persistent: bool = False,
    ) -> None:
        self.root = root.resolve()
        # persistent: keep Node.js running between uses (an agent's turns) until aclose()
        self._persistent = persistent
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
        self._lock = threading.Lock()
        self._process: _NodeProcess | None = None
        self._described: dict[str, Described] | None = None
        self._entered = 0
        self._busy = 0

    @property
    def process_id(self) -> int | None:
        """The id of the running Node.js process, if one runs."""
        process = self._process
        return process.pid if process is not None and process.alive else None

    def enter(self) -> None:
        """A use begins (a run of the agent): the process stays up until it ends."""
        self._entered += 1

    def leave(self) -> None:
        """A use ends: without `persistent`, the last one stops the process."""
        self._entered = max(0, self._entered - 1)
        if self._entered == 0 and not self._persistent:
            self.close()

    async def aclose(self) -> None:
        """Stop Node.js; the next use starts it again."""
        self.close()

    def close(self) -> None:
        """Kill the Node.js process (and anything it started); calls in flight fail."""
        with self._lock:
            process, self._process = self._process, None
        if process is not None:
            process.stop("the TypeScript toolset was closed")

    async def describe(self) -> dict[str, Described]:
        """Each tool by name, its types read once (`ToolLoadError` when they cannot be)."""
        with self._use():
            return await self._describe()

    async def call(self, name: str, tool_args: dict[str, Any]) -> Any:
        """What tool `name` returns for `tool_args`; `MissingArguments` when required ones
        are absent, `TimeoutError` past the tool's timeout."""
        with self._use():
            entry = (await self._describe())[name]
            missing = [key for key in entry.required if key not in tool_args]
            if missing:
                raise MissingArguments(f"missing required argument(s): {', '.join(missing)}")
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
            if self._entered == 0 and self._busy == 0 and not self._persistent:
                self.close()

    async def _describe(self) -> dict[str, Described]:
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
        described: dict[str, Described] = {}
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


def _definition(name: str, tool: TypeScriptTool, path: Path, answer: dict[str, Any]) -> Described:
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
    layout = function.get("layout")
    return Described(
        tool,
        path,
        name,
        parameters if isinstance(parameters, dict) else _PERMISSIVE_OBJECT,
        description,
        layout if isinstance(layout, list) else None,
    )


def _summary(doc: Any) -> str | None:
    """The first paragraph of a JSDoc comment, as the tool's description."""
    if not isinstance(doc, str) or not doc.strip():
        return None
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ").strip() or None
