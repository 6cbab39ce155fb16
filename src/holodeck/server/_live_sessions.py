"""Sessions kept alive in this process between the turns of a conversation.

The store is the truth: each turn holds the session's lock, loads its JSON and saves it
back. When the JSON loaded is exactly what this process saved last, the `Session`
object it kept is still that conversation, so it is reused: the history is not parsed
again, and the MCP servers it started (`scope: session`) keep running. When another
process took a turn since (the JSON differs), or the session expired or was deleted,
the kept object is closed and the session is read from the store. At most `size`
sessions are kept; the least recently used, and those idle for `idle_s`, are closed."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from holodeck.runtime import Agent, Session
from holodeck.sessions import SessionStore


@dataclass
class _Kept:
    session: Session
    saved: bytes  # the JSON this process last saved for it
    used: float


class LiveSessions:
    def __init__(self, size: int = 1000, idle_s: float = 900.0) -> None:
        self.size, self.idle_s = size, idle_s
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._kept)

    @asynccontextmanager
    async def turn(
        self, agent: Agent, store: SessionStore, key: str, session_id: str, wait_s: float
    ) -> AsyncIterator[Session]:
        """Session `key` of `store`, held for one turn and saved after it (also when the
        turn fails: an unfinished turn has left the conversation as it was)."""
        async with store.lock(key, wait_s=wait_s):
            data = await store.load(key)
            kept = self._kept.pop(key, None)
            if kept is not None and kept.session.agent is agent and kept.saved == data:
                session = kept.session
            else:
                if kept is not None:
                    self._close(kept.session)
                session = (
                    Session(agent, session_id)
                    if data is None
                    else Session.from_json(agent, data, session_id=session_id)
                )
            saved = b""
            try:
                yield session
            finally:
                saved = session.to_json()
                try:
                    await store.save(key, saved)
                except BaseException:
                    self._close(session)
                    raise
                self._keep(key, _Kept(session, saved, time.monotonic()))

    def _keep(self, key: str, kept: _Kept) -> None:
        self._kept[key] = kept
        now = time.monotonic()
        while self._kept:
            oldest_key, oldest = next(iter(self._kept.items()))
            if len(self._kept) <= self.size and now - oldest.used < self.idle_s:
                break
            del self._kept[oldest_key]
            self._close(oldest.session)

    def _close(self, session: Session) -> None:
        task = asyncio.get_running_loop().create_task(session.aclose())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        kept, self._kept = list(self._kept.values()), OrderedDict()
        await asyncio.gather(*(k.session.aclose() for k in kept), return_exceptions=True)
        await asyncio.gather(*self._closing, return_exceptions=True)
