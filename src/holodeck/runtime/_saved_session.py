"""A saved session (`Session.to_json()`: a chat's `--session` file, a value of a
`SessionStore`) read without an agent: its head and its messages. `Session.from_json`
continues one with an agent; `read_saved_session` gives what a person reads of it (its
entries), which is what `holodeck test capture` turns into a test case.

    >>> saved = read_saved_session(b'{"format": "holodeck-session", "version": 1, "messages": []}')
    >>> saved.agent, saved.entries
    (None, [])
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from holodeck.errors import SessionError
from holodeck.runtime._entries import Entry, entries_of

FORMAT = "holodeck-session"
VERSION = 1


@dataclass(frozen=True)
class SavedSession:
    """What a saved session says: its id and agent (when it names them) and its entries."""

    id: str | None
    agent: str | None
    entries: list[Entry]


def parse_saved(data: bytes | str) -> tuple[dict[str, Any], list[ModelMessage]]:
    """The saved session's JSON object and its messages; raises `SessionError`. A bare
    list of messages (the earlier chat session file) is read too."""
    try:
        raw = json.loads(data)
    except ValueError as exc:
        raise SessionError(f"not JSON: {exc}") from None
    except RecursionError:
        raise SessionError("its JSON nests too deeply") from None
    if isinstance(raw, list):
        raw = {"format": FORMAT, "version": VERSION, "messages": raw}
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise SessionError("not a HoloDeck session (no `format: holodeck-session`)")
    if raw.get("version") != VERSION:
        raise SessionError(
            f"session format version {raw.get('version')!r} is not supported "
            f"(this HoloDeck reads version {VERSION})"
        )
    try:
        messages = ModelMessagesTypeAdapter.validate_python(raw.get("messages", []))
    except RecursionError:
        raise SessionError("the session's messages nest too deeply") from None
    except (ValueError, TypeError, ArithmeticError) as exc:
        problem = str(exc).splitlines()[0][:160]
        raise SessionError(f"the session's messages are damaged ({problem})") from None
    return raw, messages


def read_saved_session(data: bytes | str) -> SavedSession:
    """The saved session `data` as entries; raises `SessionError`."""
    raw, messages = parse_saved(data)
    named = {key: raw.get(key) for key in ("id", "agent")}
    return SavedSession(
        id=named["id"] if isinstance(named["id"], str) else None,
        agent=named["agent"] if isinstance(named["agent"], str) else None,
        entries=entries_of(messages),
    )
