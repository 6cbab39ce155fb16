"""Retry tools that fail with a connection error, up to three more times."""

from __future__ import annotations

from typing import Any


async def on_tool_error(call: Any, error: Exception, retry: Any) -> Any:
    if not isinstance(error, ConnectionError):
        raise error  # not ours: the next middleware (or the default) handles it
    for _ in range(3):
        try:
            return await retry()
        except ConnectionError as again:
            error = again
    raise error
