"""Synchronous tools run in threads of their own that never hold the process.

pydantic-ai runs a synchronous function in a worker thread and, when the turn is
cancelled, waits for it to return; Python also waits for such threads at exit. A tool
that sleeps for a minute would then hold up Ctrl+C by a minute. Here each call runs in a
daemon thread: a cancelled turn stops waiting at once, the call's result is dropped when
it comes, and the process may exit while the call is still running.

The threads belong to the agent whose turn made the calls (`ToolThreads`, found through
`TOOL_THREADS`): closing the agent joins the threads of the calls that ended and names
those still running, which nothing can stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import threading
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar

_T = TypeVar("_T")
log = logging.getLogger("holodeck.tools")

JOIN_S = 1.0  # a call that has returned ends its thread at once; this is a safety bound


class ToolThreads:
    """The threads of one owner's synchronous tool calls (an agent's)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: dict[threading.Thread, threading.Event] = {}  # -> the call returned

    def start(self, thread: threading.Thread, returned: threading.Event) -> None:
        with self._lock:
            self._threads = {t: r for t, r in self._threads.items() if t.is_alive()}
            self._threads[thread] = returned
        thread.start()

    @property
    def alive(self) -> list[threading.Thread]:
        with self._lock:
            return [t for t in self._threads if t.is_alive()]

    def close(self, owner: str) -> None:
        """Join the threads whose call returned; name those still running (a cancelled
        call that has not returned: Python cannot stop a thread)."""
        with self._lock:
            threads, self._threads = self._threads, {}
        for thread, returned in threads.items():
            if returned.is_set():
                thread.join(JOIN_S)
            elif thread.is_alive():
                log.warning(
                    "%s: the tool call in thread %s is still running and cannot be stopped; "
                    "its result will be dropped",
                    owner,
                    thread.name,
                )


TOOL_THREADS: ContextVar[ToolThreads | None] = ContextVar("holodeck_tool_threads", default=None)


async def in_daemon_thread(function: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    """`function(*args, **kwargs)` in a daemon thread, awaited from the event loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()
    context = contextvars.copy_context()

    returned = threading.Event()

    def work() -> None:
        try:
            result = context.run(function, *args, **kwargs)
        except BaseException as exc:
            _deliver(loop, future, None, exc)
        else:
            _deliver(loop, future, result, None)
        finally:
            returned.set()

    # a daemon: a cancelled call cannot be stopped, and must not keep the process from
    # exiting; its owner joins it when the call has returned, and names it otherwise
    thread = threading.Thread(target=work, name=f"tool-{_name(function)}", daemon=True)
    owner = TOOL_THREADS.get()
    if owner is None:  # called outside any agent's turn: nobody to join it
        thread.start()
    else:
        owner.start(thread, returned)
    return await future


def threaded(function: Callable[..., _T]) -> Callable[..., Awaitable[_T]]:
    """An async version of `function` running it with `in_daemon_thread`; its signature,
    type hints and docstring are `function`'s (tool schemas are read from them)."""

    @functools.wraps(function)
    async def call(*args: Any, **kwargs: Any) -> _T:
        return await in_daemon_thread(function, *args, **kwargs)

    return call


def _deliver(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
    result: Any,
    error: BaseException | None,
) -> None:
    def settle() -> None:
        if future.done():  # the caller was cancelled: nobody wants the result
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    with contextlib.suppress(RuntimeError):  # the loop has closed meanwhile
        loop.call_soon_threadsafe(settle)


def _name(function: Callable[..., Any]) -> str:
    return getattr(function, "__name__", "call")
