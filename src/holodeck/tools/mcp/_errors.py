"""How MCP calls and connections fail: the errors raised, and what an exception
from the SDK or the transport means."""

from __future__ import annotations

import asyncio

import anyio
import httpx2

from holodeck.errors import ToolError


class McpServerError(ToolError):
    """An MCP server could not be started, reached, or answered in time."""


class McpToolError(ToolError):
    """The server ran the tool and it reported an error (`isError`), or refused the call."""


class _Lost(Exception):
    """The connection ended while a call waited for its answer."""


class _Permanent(Exception):
    """A start failure that trying again cannot fix."""


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
