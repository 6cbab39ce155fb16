"""Every refusal and failure is a JSON body `{"error": {type, message, hint}, "request_id"}`
with a 4xx or 5xx status; a traceback never reaches a client (it goes to the log)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from holodeck.errors import RequestError


class ApiError(RequestError):
    """A request refused with its HTTP status: raised by routes and guards, rendered as
    JSON (and, like every HoloDeck error, with a message and a hint)."""

    def __init__(
        self,
        status: int,
        kind: str,
        message: str,
        *,
        hint: str | None = None,
        headers: dict[str, str] | None = None,
        param: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status, self.kind = status, kind
        self.headers = headers or {}
        self.param = param  # the request's field at fault, for OpenAI-shaped errors


# How a service answers an `ApiError`: the plain shape, or the server's (which also logs
# the refusal and speaks OpenAI's shape on its routes).
Respond = Callable[[Request, ApiError], Response]


def error_body(kind: str, message: str, hint: str | None, request_id: str | None) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message, "hint": hint}, "request_id": request_id}


def error_response(request: Request, error: ApiError) -> JSONResponse:
    """`error` in the shared shape, with the request's id (`RequestIds`)."""
    body = error_body(error.kind, error.message, error.hint, request_id_of(request))
    return JSONResponse(body, status_code=error.status, headers=error.headers)


def request_id_of(request: Request) -> str | None:
    return getattr(request.state, "request_id", None)


async def refuse(
    scope: Scope, receive: Receive, send: Send, error: ApiError, respond: Respond = error_response
) -> None:
    """`error` answered by an ASGI middleware, before any route (or the body) is read."""
    await respond(Request(scope, receive), error)(scope, receive, send)


_HTTP_KINDS = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}


def install_error_handlers(
    app: FastAPI, *, log: logging.Logger, respond: Respond = error_response
) -> None:
    """`ApiError`, Starlette's own refusals (no such route, wrong method) and any other
    failure answer in the shared shape; a failure's traceback goes to `log`."""

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> Response:
        return respond(request, exc)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        kind = _HTTP_KINDS.get(exc.status_code, "http_error")
        headers = dict(exc.headers or {})
        return respond(request, ApiError(exc.status_code, kind, str(exc.detail), headers=headers))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        log.error("request %s failed", request_id_of(request) or "?", exc_info=exc)
        failed = ApiError(
            500,
            "internal_error",
            f"the server failed: {type(exc).__name__}",
            hint="the server's log has the details; report it with the request_id",
        )
        return respond(request, failed)
