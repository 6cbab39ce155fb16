"""Whose memories a conversation reads and writes.

The rule is the sessions' rule (server/_turns.py `session_key`): a served request's user
is its API key's name, and a `user_id` the client sends lives under that key, so another
key naming the same `user_id` reaches other memories. On a terminal the user is `local`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from holodeck.errors import RequestError

LOCAL_USER = "local"  # the person at the terminal (chat, test, a program)
ANONYMOUS = "anonymous"  # a server without keys, to a client that sends no user_id
AGENT_SHARED = "@agent"  # `scope: agent`: one set of memories every user shares
USER_ID = re.compile(r"^[A-Za-z0-9._@:-]{1,128}$")


@dataclass(frozen=True)
class MemoryOwner:
    """The user a turn runs for, and its session."""

    user: str = LOCAL_USER
    session: str | None = None


def served_user(key_name: str | None, user_id: str | None) -> str:
    """The memory user of a request made with key `key_name` (None: a server without
    keys) naming `user_id` (None: the key itself is the user)."""
    if user_id is not None and not USER_ID.fullmatch(user_id):
        raise RequestError(
            f"user_id {user_id!r} is not a user id",
            hint="use 1 to 128 letters, digits and . _ @ : -",
        )
    if key_name is None:
        return user_id or ANONYMOUS
    return key_name if user_id is None else f"{key_name}/{user_id}"
