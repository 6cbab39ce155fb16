"""`MemoryBank`: an agent's memories in one store, each user's in a collection of its
own, searched with the search tools' stores and embeddings.

    async with MemoryBank(agent="helper", location=loc, embedder=None,
                          scope="user", retention_days=None) as bank:
        await bank.remember(MemoryOwner("alice"), "Alice prefers tea")
        found = await bank.recall(MemoryOwner("alice"), "what does Alice drink?", k=3)
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Self

from holodeck.errors import ConfigurationError
from holodeck.memory._owners import AGENT_SHARED, MemoryOwner
from holodeck.memory._placement import collection_of
from holodeck.memory._records import Memory, from_chunk, normalised
from holodeck.search.embeddings import Embedder
from holodeck.search.embeddings._protocol import producer_of
from holodeck.search.fusion import fuse
from holodeck.search.stores import (
    DroppableStore,
    Scored,
    StoreLocation,
    VectorStore,
    open_store,
)
from holodeck.spec.models.long_term_memory import MemoryScope

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]  # one row: (1, width)
Kept = Literal["kept", "known", "replaced"]
_DAY_S = 86400.0
_SAME = 0.97  # cosine similarity above which two memories say the same thing
_OPEN_STORES = 16  # users' collections kept open at once (a server has many users)
BATCH = 1000  # memories per write of `remember_many`


def _made(entry: str | tuple[str, str], session: str | None) -> Memory:
    if isinstance(entry, str):
        return Memory.new(entry.strip(), session)
    memory_id, text = entry
    return Memory(memory_id, text.strip(), time.time(), session)


class MemoryBank:
    """The memories of agent `agent` in the store at `location`, ranked by `embedder`'s
    vectors and by their words (None: words only)."""

    def __init__(
        self,
        *,
        agent: str,
        location: StoreLocation,
        embedder: Embedder | None,
        scope: MemoryScope,
        retention_days: int | None,
    ) -> None:
        self.agent = agent
        self.location = location
        self.embedder = embedder
        self.scope = scope
        self.retention_days = retention_days
        self._stores: OrderedDict[str, VectorStore] = OrderedDict()
        self._lock = asyncio.Lock()
        self._dimensions: int | None = None
        self._swept: set[str] = set()  # users whose expired memories were dropped

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        async with self._lock:
            stores, self._stores = list(self._stores.values()), OrderedDict()
        for store in stores:
            await store.__aexit__(None, None, None)

    # -- whose

    def holder(self, owner: MemoryOwner) -> str:
        """The user whose collection `owner`'s conversation uses."""
        return AGENT_SHARED if self.scope == "agent" else owner.user

    def _visible(self, owner: MemoryOwner, memory: Memory) -> bool:
        if self.scope == "session":
            return memory.session == owner.session
        return True

    def _expired(self, memory: Memory, now: float) -> bool:
        return self.retention_days is not None and (
            now - memory.created_at > self.retention_days * _DAY_S
        )

    # -- the model's tools

    async def remember(
        self, owner: MemoryOwner, text: str, *, replaces: str | None = None
    ) -> tuple[Memory, Kept]:
        """Keep `text` for `owner`; a memory saying the same is not kept twice (the known
        one is returned), and `replaces` (a memory id) is dropped for the new one."""
        text = text.strip()
        if not text:
            raise ConfigurationError("a memory needs some text", hint="say what to remember")
        store = await self._store(self.holder(owner))
        vector = await self._embed(text)
        known = await self._same(store, owner, text, vector)
        if known is not None and replaces in (None, known.id):
            return known, "known"
        session = owner.session if self.scope == "session" else None
        memory = Memory.new(text, session)
        await store.replace_file(memory.as_file(), [memory.as_chunk()], vector)
        if replaces is not None and await self._owned(store, owner, replaces) is not None:
            await store.delete_file(replaces)
            return memory, "replaced"
        return memory, "kept"

    async def remember_many(
        self, owner: MemoryOwner, texts: Sequence[str | tuple[str, str]], *, batch: int = BATCH
    ) -> list[Memory]:
        """Keep every text of `texts` (or `(id, text)`: under that id) for `owner`, `batch`
        at a time, each batch one write to the store (imports, seeding): no duplicate
        check, no guardrails (what is imported is taken as it is). The memories kept, in
        order; empty texts are left out."""
        store = await self._store(self.holder(owner))
        session = owner.session if self.scope == "session" else None
        kept: list[Memory] = []
        made = [_made(entry, session) for entry in texts]
        ready = [memory for memory in made if memory.text]
        for first in range(0, len(ready), batch):
            memories = ready[first : first + batch]
            vectors = None
            if self.embedder is not None:
                vectors = await self.embedder.embed([m.text for m in memories])
            files = [(m.as_file(), m.as_chunk()) for m in memories]
            add_files = getattr(store, "add_files", None)  # the embedded store's bulk write
            if add_files is not None:
                await add_files(files, vectors)
            else:
                for index, (file, chunk) in enumerate(files):
                    row = None if vectors is None else vectors[index : index + 1]
                    await store.replace_file(file, [chunk], row)
            kept += memories
        return kept

    async def recall(self, owner: MemoryOwner, query: str, k: int) -> list[Memory]:
        """`owner`'s memories closest to `query`, best first: at most `k`."""
        store = await self._store(self.holder(owner))
        if await store.count() == 0:
            return []
        wanted = k * 4 if self.scope == "session" else k  # others' sessions are left out
        rankings: list[tuple[list[Scored], float]] = [(await store.keyword(query, wanted), 1.0)]
        vector = await self._embed(query)
        if vector is not None:
            rankings.insert(0, (await store.nearest(vector[0], wanted), 1.0))
        now = time.time()
        found: list[Memory] = []
        for scored, _ in fuse(rankings):
            memory = from_chunk(scored.chunk)
            if self._expired(memory, now):
                await store.delete_file(memory.id)
            elif self._visible(owner, memory):
                found.append(memory)
        return found[:k]

    async def forget(self, owner: MemoryOwner, memory_id: str) -> bool:
        """Drop one of `owner`'s memories; False when it holds none of that id."""
        store = await self._store(self.holder(owner))
        if await self._owned(store, owner, memory_id) is None:
            return False
        await store.delete_file(memory_id)
        return True

    # -- a user's rights

    async def memories(self, user: str) -> list[Memory]:
        """Every memory `user` has (`scope: agent`: the agent's), oldest first."""
        store = await self._store(self.holder(MemoryOwner(user)))
        found: list[Memory] = []
        for memory_id in sorted(await store.files()):
            chunks = await store.record_chunks(memory_id, memory_id)
            found.extend(from_chunk(chunk) for chunk in chunks)
        now = time.time()
        found = [m for m in found if not self._expired(m, now)]
        return sorted(found, key=lambda m: (m.created_at, m.id))

    async def delete(self, user: str, memory_id: str) -> bool:
        """Delete one memory of `user`, of whichever session; False when `user` has none
        of that id."""
        store = await self._store(self.holder(MemoryOwner(user)))
        if not await store.record_chunks(memory_id, memory_id):
            return False
        await store.delete_file(memory_id)
        return True

    async def delete_user(self, user: str) -> int:
        """Delete every memory of `user`; how many there were."""
        store = await self._store(self.holder(MemoryOwner(user)))
        ids = list(await store.files())
        for memory_id in ids:
            await store.delete_file(memory_id)
        return len(ids)

    async def drop_user(self, user: str) -> None:
        """Delete every memory of `user` and the collection that held them: the user's
        folder in the embedded store, its tables in PostgreSQL, its index and keys in Redis
        (a user made for one test case leaves nothing behind). Another bank that still has
        the folder open writes nothing more there: its stores' closing tolerates it."""
        await self.delete_user(user)
        holder = self.holder(MemoryOwner(user))
        async with self._lock:
            store = self._stores.pop(holder, None)
        if store is None:
            return
        if isinstance(store, DroppableStore):
            await store.drop()
            return
        await store.__aexit__(None, None, None)
        home = getattr(store, "home", None)  # the embedded store's folder
        if self.location.provider == "embedded" and isinstance(home, Path):
            shutil.rmtree(home, ignore_errors=True)

    # -- inside

    async def _owned(self, store: VectorStore, owner: MemoryOwner, memory_id: str) -> Memory | None:
        for chunk in await store.record_chunks(memory_id, memory_id):
            memory = from_chunk(chunk)
            if self._visible(owner, memory):
                return memory
        return None

    async def _same(
        self, store: VectorStore, owner: MemoryOwner, text: str, vector: Vector | None
    ) -> Memory | None:
        """A memory of `owner` that says what `text` says, if one is kept: the same words,
        or (with an embedder) a vector all but equal."""
        wanted = normalised(text)
        for scored in await store.keyword(text, 5):
            memory = from_chunk(scored.chunk)
            if self._visible(owner, memory) and normalised(memory.text) == wanted:
                return memory
        if vector is not None:
            for scored in await store.nearest(vector[0], 5):
                memory = from_chunk(scored.chunk)
                if scored.score >= _SAME and self._visible(owner, memory):
                    return memory
        return None

    async def _embed(self, text: str) -> Vector | None:
        if self.embedder is None:
            return None
        rows = await self.embedder.embed([text])
        self._dimensions = int(rows.shape[1])
        return rows

    async def _store(self, user: str) -> VectorStore:
        async with self._lock:
            store = self._stores.get(user)
            if store is not None:
                self._stores.move_to_end(user)
                return store
            dimensions = await self._width()
            producer = producer_of(self.embedder) if self.embedder is not None else None
            store = open_store(self.location, collection_of(self.agent, user, producer), dimensions)
            await store.__aenter__()
            self._stores[user] = store
            while len(self._stores) > _OPEN_STORES:
                _, oldest = self._stores.popitem(last=False)
                await oldest.__aexit__(None, None, None)
        if user not in self._swept:
            self._swept.add(user)
            await self._sweep(store)
        return store

    async def _width(self) -> int | None:
        if self.embedder is None:
            return None
        if self._dimensions is None:
            await self._embed("width")
        return self._dimensions

    async def _sweep(self, store: VectorStore) -> None:
        """Drop the memories past `retention_days` (once per user and process; recall
        drops those it meets later)."""
        if self.retention_days is None:
            return
        now = time.time()
        for memory_id in list(await store.files()):
            for chunk in await store.record_chunks(memory_id, memory_id):
                if self._expired(from_chunk(chunk), now):
                    await store.delete_file(memory_id)
