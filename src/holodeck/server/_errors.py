"""Every failure becomes a JSON body `{"error": {type, message, hint}, "request_id"}` with
a 4xx or 5xx status; a traceback never reaches a client (it goes to the server's log)."""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from holodeck.errors import (
    BusyError,
    HoloDeckError,
    LimitReached,
    RequestError,
    StoreError,
    meaning_of,
)
from holodeck.server._protocols import API_PREFIXES
from holodeck.server.openai import is_openai_path, openai_error_body

log = logging.getLogger("holodeck.server")


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


def error_response(
    request: Request,
    status: int,
    kind: str,
    message: str,
    hint: str | None = None,
    headers: dict[str, str] | None = None,
    param: str | None = None,
) -> JSONResponse:
    request_id = getattr(request.state, "request_id", None)
    body: dict[str, Any] = {"error": {"type": kind, "message": message, "hint": hint}}
    if is_openai_path(request.url.path):
        body["error"] = openai_error_body(status, kind, message, hint, param)
    body["request_id"] = request_id
    _log_refusal(request, status, message)
    return JSONResponse(body, status_code=status, headers=headers)


async def refuse(scope: Scope, receive: Receive, send: Send, error: ApiError) -> None:
    """`error` answered by an ASGI middleware, before any route (or the body) is read."""
    response = error_response(
        Request(scope, receive), error.status, error.kind, error.message, error.hint, error.headers
    )
    await response(scope, receive, send)


def _log_refusal(request: Request, status: int, message: str) -> None:
    """Refused API requests are logged too: in their turn's agent's log, or, before an
    agent was chosen, in the only agent's (with several, which one is unknown)."""
    turn = getattr(request.state, "turn", None)
    if turn is not None:
        turn.log(status, message)  # once: a turn that failed has logged itself
        return
    state = getattr(request.app.state, "holodeck", None)
    if state is None or not request.url.path.startswith(API_PREFIXES):
        return
    agents = state.registry.agents
    if len(agents) == 1:
        served = next(iter(agents.values()))
        served.log.write(
            request_id=getattr(request.state, "request_id", ""),
            session_id=None,
            message=None,
            tool_calls=[],
            response=None,
            started=getattr(request.state, "started", time.perf_counter()),
            status=status,
            error=message,
            endpoint=request.url.path,
            key=getattr(request.state, "key_name", None),
        )


def from_holodeck_error(exc: HoloDeckError) -> ApiError:
    """The status and type the errors table (`holodeck.errors.MEANINGS`) gives a failure:
    the client's request or input, a model provider, a busy session, a store, or ours."""
    if isinstance(exc, ApiError):
        return exc
    meaning = meaning_of(exc)
    headers = {}
    if isinstance(exc, BusyError | StoreError):  # both pass: say when to try again
        headers["Retry-After"] = "1" if isinstance(exc, BusyError) else "5"
    if isinstance(exc, LimitReached) and exc.cap.startswith("limits.key_daily"):
        headers["Retry-After"] = str(seconds_to_next_utc_day())
    return ApiError(meaning.status, meaning.kind, exc.message, hint=exc.hint, headers=headers)


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "body"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(
            request, exc.status, exc.kind, exc.message, exc.hint, exc.headers, exc.param
        )

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [f"{_where(e['loc'])}: {e['msg']}" for e in exc.errors()[:5]]
        openai = is_openai_path(request.url.path)  # OpenAI's clients expect 400 and `param`
        first = exc.errors()[0]["loc"] if exc.errors() else ()
        return error_response(
            request,
            400 if openai else 422,
            "invalid_request",
            "; ".join(problems) or "the request is not valid",
            hint="see /openapi.json for the request's schema",
            param=_where(first[1:] if first[:1] == ("body",) else first) if openai else None,
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kinds = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}
        return error_response(
            request,
            exc.status_code,
            kinds.get(exc.status_code, "http_error"),
            str(exc.detail),
            headers=dict(exc.headers or {}),
        )

    @app.exception_handler(HoloDeckError)
    async def holodeck_error(request: Request, exc: HoloDeckError) -> JSONResponse:
        return await api_error(request, from_holodeck_error(exc))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("request %s failed", getattr(request.state, "request_id", "?"), exc_info=exc)
        return error_response(
            request,
            500,
            "internal_error",
            f"the server failed: {type(exc).__name__}",
            hint="the server's log has the details; report it with the request_id",
        )


def seconds_to_next_utc_day() -> int:
    """When a key's daily caps start afresh."""
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, int((tomorrow - now).total_seconds()))
