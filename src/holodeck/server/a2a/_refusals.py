"""One log line per refused A2A request. The a2a-sdk logs a malformed JSON-RPC request
with a traceback (about 1.4 KB each) and a warning or two besides; a client sending
garbage would fill the server's log. Those records are dropped here, and the server
writes one line instead: the method, the JSON-RPC error code and both request ids.
Failures of the server itself (the SDK's "Unhandled exception") keep their traceback.

Params the specification requires and the SDK does not check are refused here first
(`early_refusal`)."""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from holodeck.server._state import request_id_of

log = logging.getLogger("holodeck.server")

# the a2a-sdk's loggers that report each refusal
_SDK_LOGGERS = (
    "a2a.server.routes.jsonrpc_dispatcher",
    "a2a.compat.v0_3.jsonrpc_adapter",
    "a2a.utils.version_validator",
)
# what they log with a traceback for a request that is merely malformed
_REFUSALS = frozenset(
    {
        "Failed to validate base JSON-RPC request",
        "Failed to validate base JSON-RPC request for v0.3",
        "Failed to parse request params",
    }
)


class _SdkRefusals(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg in _REFUSALS:
            return False
        # warnings ("Request Error ...", "Version mismatch ...") repeat what `log_refusal`
        # says; the error records of a request the SDK could not handle stay
        return record.levelno >= logging.ERROR and not str(record.msg).startswith("Request Error")


_FILTER = _SdkRefusals()


def quiet_sdk_refusals() -> None:
    """Drop the SDK's own records of refused requests (once per process)."""
    for name in _SDK_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


async def log_refusal(request: Request, response: Response) -> None:
    """One line when `response` is a JSON-RPC error (a streamed answer is not one)."""
    if response.media_type != "application/json":
        return
    try:
        answer = json.loads(bytes(response.body))
    except ValueError:
        return
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict):
        return
    method = await _method_of(request)
    message = " ".join(str(error.get("message", "")).split())[:200]
    log.warning(
        "A2A request refused: method=%s code=%s id=%s request_id=%s: %s",
        method,
        error.get("code"),
        json.dumps(answer.get("id")),
        request_id_of(request),
        message,
    )


_SENDS = frozenset({"SendMessage", "SendStreamingMessage", "message/send", "message/stream"})
_INVALID_PARAMS = -32602


async def early_refusal(request: Request) -> JSONResponse | None:
    """A `-32602` answer for params the specification requires that the a2a-sdk lets
    through (1.0) or calls an invalid request (`-32600`, 0.3): a message without
    `messageId`, `role` or `parts`, a negative `historyLength`. None when they are fine
    (or the body is not a JSON-RPC request at all: the SDK says so)."""
    try:
        body: Any = await request.json()
    except (ValueError, RecursionError):
        return None
    if not isinstance(body, dict) or not isinstance(body.get("params"), dict):
        return None
    problem = _params_problem(body.get("method"), body["params"])
    if problem is None:
        return None
    message, hint = problem
    rpc_id = body.get("id") if isinstance(body.get("id"), str | int) else None
    error = {"code": _INVALID_PARAMS, "message": message, "data": {"hint": hint}}
    return JSONResponse({"jsonrpc": "2.0", "id": rpc_id, "error": error})


def _params_problem(method: Any, params: dict[str, Any]) -> tuple[str, str] | None:
    """(what is wrong, how to fix it) with the params of `method`, or None."""
    lengths = [("params.historyLength", params.get("historyLength"))]
    configuration = params.get("configuration")
    if isinstance(configuration, dict):
        lengths.append(("params.configuration.historyLength", configuration.get("historyLength")))
    for where, length in lengths:
        if isinstance(length, int | float) and length < 0:
            return f"{where}: {length} is negative", "send 0 or more, or leave it out for all"
    message = params.get("message")
    if isinstance(method, str) and method in _SENDS and isinstance(message, dict):
        for field in ("messageId", "role", "parts"):
            if message.get(field) in (None, "", [], "ROLE_UNSPECIFIED"):
                return (
                    f"params.message.{field} is missing",
                    "a message needs a messageId (unique, the client's), a role (user) and "
                    "its parts",
                )
    return None


async def _method_of(request: Request) -> str:
    try:
        body: Any = await request.json()  # read already: starlette keeps the body
    except ValueError:
        return "(not JSON)"
    method = body.get("method") if isinstance(body, dict) else None
    return method[:80] if isinstance(method, str) else "(none)"
