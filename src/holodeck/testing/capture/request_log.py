"""Served turns sampled from an agent's request log (`~/.holodeck/logs/agent-<name>.log`
and the files its rotation kept), so a suite grows from what users actually asked.

Each line the server logged for a turn that was answered (status below 400; decisions on
paused calls are not questions) holds the user's message, the tools called (their
arguments too when the log level is DEBUG) and the answer. A log written with
`logging.redact_content: true` holds only lengths: there is nothing to capture, and the
error says how to log content, or which sessions to capture from the session store.

Lines are read oldest file first; the same question asked twice counts once. `sample`
picks with `random.Random(seed)`, so one seed picks the same turns of the same log;
they come out in the order they were logged."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from holodeck.errors import InputError
from holodeck.testing.capture.conversation import Captured, CapturedCall, CapturedTurn

_ROTATED = re.compile(r"^\.\d{4}-\d{2}-\d{2}(?:_\d{2}(?:-\d{2}){0,2})?$")
_RELATIVE = re.compile(r"^(\d+)([dhm])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


class RequestLogError(InputError):
    """The request log cannot be read, or holds nothing to capture."""


@dataclass(frozen=True)
class LoggedTurn:
    at: datetime
    order: int  # where in the log (its files oldest first) the line was
    request_id: str
    session_id: str | None
    captured: Captured


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """`--since`: an ISO date or date-time (UTC unless it says), or `7d`, `12h`, `30m` ago."""
    now = now or datetime.now(UTC)
    relative = _RELATIVE.match(text.strip())
    if relative:
        return now - timedelta(**{_UNITS[relative.group(2)]: int(relative.group(1))})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise RequestLogError(
            f"--since {text!r}: not a date",
            hint="give a date (2026-12-01), a date and time (2026-12-01T09:30) or an age "
            "(7d, 12h, 30m)",
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def sample_log(
    path: Path, count: int, *, since: datetime | None = None, seed: int | None = None
) -> list[LoggedTurn]:
    """Up to `count` answered turns of the log at `path` (and its rotated files), logged
    at or after `since`, chosen at random with `seed`, oldest first."""
    turns, hidden = _turns(path, since)
    if not turns:
        if hidden:
            raise _content_not_logged(path, hidden)
        after = f" since {since.isoformat(timespec='minutes')}" if since else ""
        raise RequestLogError(
            f"{path}: no answered turn{after} to capture",
            hint="pick an earlier --since, or check that this is the agent's request log",
        )
    chosen = random.Random(seed).sample(turns, min(count, len(turns)))
    return sorted(chosen, key=lambda turn: turn.order)  # as they were logged


def _turns(path: Path, since: datetime | None) -> tuple[list[LoggedTurn], list[str]]:
    """The answered turns with their words, and the session ids of those logged without."""
    turns: list[LoggedTurn] = []
    hidden: list[str] = []
    asked: set[str] = set()
    for file, number, record in _records(path):
        if not _answered(record):
            continue
        at = _timestamp(record)
        if at is None or (since is not None and at < since):
            continue
        message, response = _text(record.get("message_input")), record.get("response")
        if message is None or not isinstance(response, str):
            if isinstance(record.get("session_id"), str):
                hidden.append(record["session_id"])
            continue
        key = " ".join(message.split()).casefold()
        if not key or key in asked:
            continue
        asked.add(key)
        request = str(record.get("request_id") or f"{file.name}:{number}")
        turn = CapturedTurn(message, _calls(record.get("tool_calls")), response)
        origin = f"{file.name}:{number} (request {request})"
        session = record.get("session_id")
        owner = session if isinstance(session, str) else None
        turns.append(LoggedTurn(at, len(turns), request, owner, Captured(origin, [turn])))
    return turns, hidden


def _records(path: Path) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    if not path.is_file():
        raise RequestLogError(
            f"no request log at {path}",
            hint="a served agent logs to ~/.holodeck/logs/agent-<name>.log (under "
            "HOLODECK_HOME when it is set)",
        )
    rotated = sorted(
        p for p in path.parent.glob(f"{path.name}.*") if _ROTATED.match(p.name[len(path.name) :])
    )
    for file in [*rotated, path]:
        try:
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            raise RequestLogError(f"{file}: cannot read the request log: {exc}") from None
        for number, line in enumerate(lines, start=1):
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short when the server stopped: the rest still counts
            if isinstance(record, dict):
                yield file, number, record


def _answered(record: dict[str, Any]) -> bool:
    status, endpoint = record.get("status"), str(record.get("endpoint") or "")
    return isinstance(status, int) and status < 400 and "/approvals/" not in endpoint


def _timestamp(record: dict[str, Any]) -> datetime | None:
    try:
        at = datetime.fromisoformat(str(record.get("timestamp")))
    except ValueError:
        return None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _text(message: Any) -> str | None:
    """The words of a logged message: its text, or the text parts of a message with
    parts; None when the log kept only its length."""
    if isinstance(message, str):
        return message
    if isinstance(message, list):
        texts = [
            p if isinstance(p, str) else p.get("text")
            for p in message
            if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("text"), str))
        ]
        return "\n".join(t for t in texts if t) or None
    return None


def _calls(logged: Any) -> list[CapturedCall]:
    calls = []
    for call in logged if isinstance(logged, list) else []:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or call.get("agent"):
            continue  # a sub-agent's own calls are not the agent's
        args = call.get("args")
        plain: dict[str, Any] = (
            args if isinstance(args, dict) and "redacted_chars" not in args else {}
        )
        calls.append(CapturedCall(call["name"], plain, call.get("error") is not None))
    return calls


def _content_not_logged(path: Path, sessions: list[str]) -> RequestLogError:
    shown = ", ".join(dict.fromkeys(sessions[-3:]))
    return RequestLogError(
        f"{path}: the log holds only the length of each message (logging.redact_content "
        "is true), not what users asked",
        hint="set `logging: {redact_content: false}` on the agent to log what users ask "
        "(and `log_level: DEBUG` for tool arguments), or capture whole conversations from "
        f"the session store: holodeck test capture AGENT --from-session ID (sessions logged: "
        f"{shown})",
    )
