"""A session taken from a `SessionStore` for one use and put back: how a server runs a
turn of a conversation that any of its processes may have started.

    >>> import asyncio
    >>> from holodeck import Agent, MemorySessionStore, RunOptions, load_agent
    >>> async def reply(agent: Agent, store: MemorySessionStore, message: str) -> int:
    ...     async with stored_session(agent, store, "user-42") as session:
    ...         await session.answer(message)
    ...         return len(session.messages)
    >>> async def serve() -> tuple[int, int]:  # an agent lives on one event loop
    ...     store = MemorySessionStore()
    ...     async with Agent(load_agent("examples/weather"), RunOptions(model="test")) as agent:
    ...         first = await reply(agent, store, "Hello /call get_weather")
    ...         return first, await reply(agent, store, "And tomorrow? /call get_forecast")
    >>> asyncio.run(serve())
    (4, 8)
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from holodeck.runtime._session import Session
from holodeck.sessions import DEFAULT_LOCK_WAIT_S, SessionStore

if TYPE_CHECKING:
    from holodeck.runtime._agent import Agent


@asynccontextmanager
async def stored_session(
    agent: Agent,
    store: SessionStore,
    session_id: str | None = None,
    *,
    wait_s: float = DEFAULT_LOCK_WAIT_S,
) -> AsyncIterator[Session]:
    """The session `session_id` of `store` (a new one when it has none, or no id is
    given), held so no other turn of it runs meanwhile, and saved back on exit.

    Saved even when the block fails: a turn that did not finish has left the
    conversation as it was, and the usage it counted is kept."""
    session_id = session_id or uuid.uuid4().hex
    async with store.lock(session_id, wait_s=wait_s):
        data = await store.load(session_id)
        if data is None:
            session = Session(agent, session_id)
        else:
            session = Session.from_json(agent, data, session_id=session_id)
        try:
            yield session
        finally:
            try:
                await store.save(session_id, session.to_json())
            finally:
                await session.aclose()
