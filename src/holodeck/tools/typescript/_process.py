"""The Node.js process running a toolset's TypeScript functions (`node/harness.cjs`):
requests and answers as JSON lines matched by id, so calls can overlap. Its owner (the
toolset, closed with the agent) kills it with whatever it started and joins the threads
that talk to it; a process whose owner never closed it exits by itself when its stdin
closes, as it does when Python exits."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import queue
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from holodeck.config.child_env import child_environment
from holodeck.errors import ToolError
from holodeck.tools.errors import ToolLoadError

log = logging.getLogger("holodeck.tools.typescript")

NEEDS_NODE = "TypeScript tools need Node.js 18+ on PATH"
JOIN_S = 5.0  # once Node.js is killed its pipes close, and the threads end at once


class TypeScriptToolError(ToolError):
    """A TypeScript tool threw; the message is the JavaScript error's message."""

    def __init__(self, message: str, js_name: str = "Error", stack: str = "") -> None:
        super().__init__(message)
        self.js_name = js_name
        self.stack = stack


class NodeProcessError(ToolError):
    """The Node.js process running the tools stopped, or never started."""


class _NotSent(NodeProcessError):
    """The process had already stopped: the request never reached it (safe to resend)."""


class _NodeProcess:
    """One running harness. A writer thread feeds stdin; a reader thread settles each
    request's future (on whichever event loop made it) when its answer arrives."""

    def __init__(self, node: str, harness: Path, typescript: Path, cwd: Path) -> None:
        # tools get what Node.js needs to run, not the provider keys of this process
        env = child_environment(os.environ, {"HOLODECK_TYPESCRIPT": str(typescript)})
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
        self._threads = [
            self._stderr_reader,
            self._thread(self._read_stdout, "stdout"),
            self._thread(self._write_stdin, "stdin"),
        ]

    def _thread(self, target: Any, role: str) -> threading.Thread:
        # `stop()` joins them; daemons only so that a process whose owner never stopped it
        # does not keep Python from exiting (Node.js then ends as its stdin closes)
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
        """Kill the process group, fail every pending request with `reason`, and join the
        threads that talked to it."""
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
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(JOIN_S)

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
