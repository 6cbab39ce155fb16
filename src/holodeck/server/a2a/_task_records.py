"""A2A tasks on HoloDeck sessions: a task is one turn of a conversation (its contextId is
the session id). A task's record (its state, the message, the answer) lives in the agent's
session store beside the session, under the key of the API key that started it: it
expires with the store's `ttl_seconds`, every process sharing the store finds it, and
another key finds nothing. The only thing kept in a process is the turns it is running
now, so that `tasks/cancel` can stop them (bounded by the server's admission slots);
a cancel answered by another process reaches them through their record.

A store finds records by key only, so each key's tasks are also listed in one index
document (id, context, state, last update), changed atomically for every process sharing
the store; `tasks/list` reads it, newest first, and loads the page's records.

How a task ends is decided once, by whoever claims its end first (`end_task`, atomic for
every process sharing the store): a turn finishing at the instant another process
answers `tasks/cancel` cannot write "completed" over "cancelled", nor the reverse."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import astuple, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from holodeck.server._registry import ServedAgent
from holodeck.server._turns import session_key

if TYPE_CHECKING:
    from a2a.types import Message, Task

# not a session id's character (`/`): a task's record never meets a session's key
_TASKS = "a2a/task/"
_INDEX = "a2a/tasks"
_ENDS = "a2a/task-end/"
INDEX_MOST = 1000  # the newest tasks a key's index keeps; older ones are not listed
_INDEX_KEEP_S = 30 * 86400.0  # the index of a store without ttl_seconds


@dataclass(frozen=True)
class Listed:
    """A task as the index lists it."""

    id: str
    context_id: str
    state: int
    updated: int  # its status's time, microseconds since the epoch


def task_key(served: ServedAgent, owner: str | None, task_id: str) -> str:
    return session_key(served, owner, _TASKS + task_id)


def new_id() -> str:
    return uuid.uuid4().hex


def now() -> datetime:
    return datetime.now(UTC)


async def save_task(served: ServedAgent, owner: str | None, task: Task) -> None:
    from google.protobuf.json_format import MessageToJson

    await served.store.save(task_key(served, owner, task.id), MessageToJson(task).encode())
    updated = task.status.timestamp.ToMicroseconds() or int(served.store.clock() * 1e6)
    entry = Listed(task.id, task.context_id, int(task.status.state), updated)
    await _change_index(served, owner, entry)


async def _change_index(
    served: ServedAgent, owner: str | None, entry: Listed | None
) -> list[Listed]:
    """The key's index, with `entry` put first when given (and what expired dropped)."""
    store = served.store
    oldest = (store.clock() - store.ttl_s) * 1e6 if store.ttl_s is not None else None

    def change(data: bytes | None) -> tuple[bytes, list[Listed]]:
        rows: list[Any] = json.loads(data) if data else []
        listed = [Listed(*row) for row in rows]
        if entry is not None:
            listed = [entry, *(t for t in listed if t.id != entry.id)]
        listed = [t for t in listed if oldest is None or t.updated >= oldest][:INDEX_MOST]
        return json.dumps([astuple(t) for t in listed]).encode(), listed

    keep_s = store.ttl_s if store.ttl_s is not None else _INDEX_KEEP_S
    return await store.update_counters(session_key(served, owner, _INDEX), change, keep_s=keep_s)


async def end_task(
    served: ServedAgent, owner: str | None, task_id: str, state: int | None
) -> int | None:
    """The state the task ended in: `state` when this claims its end first, else the
    one claimed before. `state` None only reads it (None: the task has not ended)."""
    store = served.store

    def claim(data: bytes | None) -> tuple[bytes, int | None]:
        if data:  # ended already: the first claim stands
            return data, int(data)
        if state is None:
            return b"", None
        return str(state).encode(), state

    keep_s = store.ttl_s if store.ttl_s is not None else _INDEX_KEEP_S
    return await store.update_counters(
        session_key(served, owner, _ENDS + task_id), claim, keep_s=keep_s
    )


async def listed_tasks(served: ServedAgent, owner: str | None) -> list[Listed]:
    """The key's tasks, most recently updated first."""
    return await _change_index(served, owner, None)


async def load_task(served: ServedAgent, owner: str | None, task_id: str) -> Task | None:
    from a2a.types import Task
    from google.protobuf.json_format import Parse

    if not task_id or "/" in task_id or len(task_id) > 128:
        return None
    data = await served.store.load(task_key(served, owner, task_id))
    return None if data is None else Parse(data.decode(), Task())


def agent_message(text: str, context_id: str, task_id: str) -> Message:
    from a2a.types import Message, Part, Role

    return Message(
        message_id=new_id(),
        context_id=context_id,
        task_id=task_id,
        role=Role.ROLE_AGENT,
        parts=[Part(text=text)],
    )


class Running:
    """The A2A turns this process runs now, by their task's record key: a cancel stops
    the asyncio task running the turn (the conversation stays as it was before it)."""

    def __init__(self) -> None:
        self._turns: dict[str, asyncio.Task[None]] = {}

    def add(self, key: str, task: asyncio.Task[None]) -> None:
        self._turns[key] = task

    def remove(self, key: str) -> None:
        self._turns.pop(key, None)

    def cancel(self, key: str) -> asyncio.Task[None] | None:
        """The turn of that key, now being cancelled; None when none runs here."""
        turn = self._turns.get(key)
        if turn is None or turn.done():
            return None
        turn.cancel()
        return turn
