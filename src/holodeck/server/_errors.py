"""The server's errors: the shared shape (`holodeck.http`), OpenAI's on its routes, each
refusal written in its agent's request log, and HoloDeck's errors given the status the
errors table says."""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from holodeck.errors import BusyError, HoloDeckError, LimitReached, StoreError, meaning_of
from holodeck.http import ApiError, error_body, request_id_of
from holodeck.http import install_error_handlers as install_shared_handlers
from holodeck.http import refuse as refuse_with
from holodeck.server._protocols import API_PREFIXES
from holodeck.server._request_log import RequestRecord
from holodeck.server.openai import is_openai_path, openai_error_body

__all__ = ["ApiError", "from_holodeck_error", "install_error_handlers", "refuse", "respond"]

log = logging.getLogger("holodeck.server")


def respond(request: Request, error: ApiError) -> JSONResponse:
    """`error` as the server answers it: OpenAI's shape on the OpenAI routes, and logged."""
    body = error_body(error.kind, error.message, error.hint, request_id_of(request))
    if is_openai_path(request.url.path):
        body["error"] = openai_error_body(
            error.status, error.kind, error.message, error.hint, error.param
        )
    _log_refusal(request, error.status, error.message)
    return JSONResponse(body, status_code=error.status, headers=error.headers)


async def refuse(scope: Scope, receive: Receive, send: Send, error: ApiError) -> None:
    """`error` answered by an ASGI middleware, before any route (or the body) is read."""
    await refuse_with(scope, receive, send, error, respond)


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
        record = RequestRecord(
            request_id=request_id_of(request) or "",
            started=getattr(request.state, "started", time.perf_counter()),
            status=status,
            error=message,
            endpoint=request.url.path,
            key=getattr(request.state, "key_name", None),
        )
        served.log.write(record)


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
    install_shared_handlers(app, log=log, respond=respond)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [f"{_where(e['loc'])}: {e['msg']}" for e in exc.errors()[:5]]
        openai = is_openai_path(request.url.path)  # OpenAI's clients expect 400 and `param`
        first = exc.errors()[0]["loc"] if exc.errors() else ()
        error = ApiError(
            400 if openai else 422,
            "invalid_request",
            "; ".join(problems) or "the request is not valid",
            hint="see /openapi.json for the request's schema",
            param=_where(first[1:] if first[:1] == ("body",) else first) if openai else None,
        )
        return respond(request, error)

    @app.exception_handler(HoloDeckError)
    async def holodeck_error(request: Request, exc: HoloDeckError) -> JSONResponse:
        return respond(request, from_holodeck_error(exc))


def seconds_to_next_utc_day() -> int:
    """When a key's daily caps start afresh."""
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, int((tomorrow - now).total_seconds()))
