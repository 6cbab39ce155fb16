"""One JSON line per request in `~/.holodeck/logs/agent-<name>.log`: timestamp,
request_id, session_id, message_input, tool_calls, response, duration_ms, error,
`key`: the name of the request's API key, and `cost_usd` when the model is priced.

A new file starts every `rotation_days` days and files older than `retention_days` are
deleted (the standard library's timed rotation). `redact_content` logs the lengths of
messages, answers and tool arguments instead of their text, and a failed tool's error as
its exception type (the tool reports it so). Nothing else of a request (headers, keys) is
ever written. Files are created 0600 in 0700 directories."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from io import TextIOWrapper
from logging.handlers import TimedRotatingFileHandler
from pathlib import Path
from typing import Any, cast

from holodeck.private_files import private_opener
from holodeck.spec.models.settings import LoggingSettings

_LEVELS = {
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARNING": logging.WARNING,
    "ERROR": logging.ERROR,
}


def _redacted(value: Any) -> dict[str, int]:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return {"redacted_chars": len(text)}


class _PrivateRotatingHandler(TimedRotatingFileHandler):
    """Each log file, the first and every one a rotation starts, is created 0600 (in a
    0700 directory): requests carry what users said."""

    def _open(self) -> TextIOWrapper:
        # the handler's mode is text ("a"): open() returns a TextIOWrapper
        return cast(
            TextIOWrapper,
            open(
                self.baseFilename,
                self.mode,
                encoding=self.encoding,
                errors=self.errors,
                opener=private_opener,
            ),
        )


@dataclass(frozen=True)
class RequestRecord:
    """What one request did, as its line in the log says it."""

    request_id: str
    endpoint: str
    status: int
    started: float  # `time.perf_counter()` when it came in
    session_id: str | None = None
    message: Any = None  # what the client sent (its text, or the parts of its message)
    tool_calls: Sequence[Mapping[str, Any]] = ()
    response: str | None = None
    error: str | None = None
    trace_ids: tuple[str, str] | None = None  # the turn's server span: trace and span id
    key: str | None = None  # the name of the API key the request came with
    model: str | None = None  # the model that answered
    client_fields: Mapping[str, Any] | None = None  # OpenAI's `user` and `metadata`
    cost_usd: Decimal | None = None  # what the turn's model requests cost, when priced


class RequestLog:
    """The request log of one served agent."""

    def __init__(self, path: Path, settings: LoggingSettings) -> None:
        self.path = path
        self.settings = settings
        self._handler = _PrivateRotatingHandler(
            path,
            when="midnight",
            interval=settings.rotation_days,
            # files kept besides the current one, each covering rotation_days
            backupCount=max(1, settings.retention_days // settings.rotation_days),
            encoding="utf-8",
            utc=True,
        )
        self._handler.setFormatter(logging.Formatter("%(message)s"))
        self._logger = logging.Logger(f"holodeck.requests.{path.stem}", _LEVELS[settings.log_level])
        self._logger.propagate = False
        self._logger.addHandler(self._handler)

    def write(self, request: RequestRecord) -> None:
        """One line for `request`, at INFO, WARNING (4xx) or ERROR (5xx)."""
        status = request.status
        level = (
            logging.ERROR if status >= 500 else logging.WARNING if status >= 400 else logging.INFO
        )
        if not self._logger.isEnabledFor(level):
            return
        redact = self.settings.redact_content
        debug = self._logger.isEnabledFor(logging.DEBUG)
        message, response = request.message, request.response
        calls = []
        for call in request.tool_calls:
            entry: dict[str, Any] = {"name": call["name"], "error": call.get("error")}
            entry["duration_ms"] = call.get("duration_ms")
            if call.get("agent"):
                entry["agent"] = call["agent"]
            if debug:  # arguments and results only when asked for
                entry["args"] = _redacted(call.get("args")) if redact else call.get("args")
                entry["result"] = _redacted(call.get("result")) if redact else call.get("result")
            calls.append(entry)
        record = {
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "level": logging.getLevelName(level),
            "request_id": request.request_id,
            "session_id": request.session_id,
            "endpoint": request.endpoint,
            "message_input": _redacted(message) if redact and message is not None else message,
            "tool_calls": calls,
            "response": _redacted(response) if redact and response is not None else response,
            "status": status,
            "duration_ms": round((time.perf_counter() - request.started) * 1000, 1),
            "error": request.error,
        }
        if request.key is not None:  # the name of the API key the request came with
            record["key"] = request.key
        if request.model:  # the model that answered (a fallback, when one took over)
            record["model"] = request.model
        if request.cost_usd is not None:  # absent when the model has no price
            record["cost_usd"] = float(request.cost_usd)
        record.update(request.client_fields or {})
        if request.trace_ids is not None:  # the turn's server span, for a trace backend
            record["trace_id"], record["span_id"] = request.trace_ids
        self._logger.log(level, json.dumps(record, default=str, ensure_ascii=False))

    def close(self) -> None:
        self._handler.close()
