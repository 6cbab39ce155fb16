"""The thread every connection lives on: one event loop, on a daemon thread, that
outlives the turn (and the event loop) that started a server."""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from holodeck.tools.mcp._connection import _Server

log = logging.getLogger("holodeck.tools.mcp")

STOP_GRACE_S = 10.0  # the SDK closes stdin, then terminates, then kills: about 6 s at most
_T = TypeVar("_T")


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
