"""Synchronous tools run in threads of their own that never hold the process.

pydantic-ai runs a synchronous function in a worker thread and, when the turn is
cancelled, waits for it to return; Python also waits for such threads at exit. A tool
that sleeps for a minute would then hold up Ctrl+C by a minute. Here each call runs in a
daemon thread: a cancelled turn stops waiting at once, the call's result is dropped when
it comes, and the process may exit while the call is still running.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

_T = TypeVar("_T")


async def in_daemon_thread(function: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    """`function(*args, **kwargs)` in a daemon thread, awaited from the event loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            result = context.run(function, *args, **kwargs)
        except BaseException as exc:
            _deliver(loop, future, None, exc)
        else:
            _deliver(loop, future, result, None)

    threading.Thread(target=work, name=f"tool-{_name(function)}", daemon=True).start()
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
