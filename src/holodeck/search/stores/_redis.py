"""Collections in Redis with its search module (Redis Stack, or Redis 8): each chunk is a
hash under the collection's prefix, indexed by FT.CREATE with a TEXT field (ranked by the
BM25STD scorer: the plain `BM25` one ignores how rare a word is) and a FLAT cosine VECTOR
field (exact). The manifest is one hash, each file's chunk keys a set, the width a field
of the collection's meta hash. `redis` is imported on open."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

import numpy as np
import numpy.typing as npt

from holodeck.search._bm25 import words
from holodeck.search._types import Chunk, Scored, SourceFile
from holodeck.search.stores._codec import chunk_from_json, chunk_to_json
from holodeck.search.stores._naming import safe_name
from holodeck.search.stores._protocol import PENDING
from holodeck.search.stores._ranking import nearest_with_ties
from holodeck.search.stores._remote import (
    check_dimensions,
    check_rows,
    missing,
    secrets_of,
    unreachable,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis

_T = TypeVar("_T")
_CONNECT_TIMEOUT_S = 10.0


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisStore:
    """The collection `collection` in the Redis (with search) at `url`."""

    def __init__(self, url: str, collection: str, dimensions: int | None) -> None:
        self.url = url
        self.collection = collection
        self.dimensions = dimensions
        name = safe_name(collection, allowed=r"A-Za-z0-9_.\-", max_len=80)
        self._prefix = f"holodeck:vectors:{name}:"
        self._index = f"holodeck:vectors:{name}"
        self._redis: Redis | None = None

    def _key(self, *parts: str) -> str:
        return self._prefix + ":".join(parts)

    async def __aenter__(self) -> Self:
        try:
            from redis.asyncio import Redis
        except ImportError:
            raise missing("redis", "redis") from None
        try:
            # RESP2: FT.SEARCH and FT.INFO reply as flat lists, whatever the client defaults to
            self._redis = Redis.from_url(
                self.url, socket_connect_timeout=_CONNECT_TIMEOUT_S, protocol=2
            )
        except ValueError as error:
            raise unreachable("Redis", self.url, error, secrets_of(self.url)) from None
        await self._call(self._create)
        return self

    async def _create(self, r: Redis) -> None:
        meta = self._key("meta")
        await r.hsetnx(meta, "dimensions", "none" if self.dimensions is None else self.dimensions)
        stored = _text(await r.hget(meta, "dimensions"))
        check_dimensions(
            "Redis", self.collection, None if stored == "none" else int(stored), self.dimensions
        )
        from redis.exceptions import ResponseError

        schema: list[Any] = ["text", "TEXT", "source", "TAG", "record_id", "TAG"]
        if self.dimensions is not None:
            schema += [
                "vector",
                "VECTOR",
                "FLAT",
                6,
                "TYPE",
                "FLOAT32",
                "DIM",
                self.dimensions,
                "DISTANCE_METRIC",
                "COSINE",
            ]
        try:
            await _command(
                r,
                "FT.CREATE",
                self._index,
                "ON",
                "HASH",
                "PREFIX",
                1,
                self._key("chunk", ""),
                "STOPWORDS",
                0,
                "SCHEMA",
                *schema,
            )
        except ResponseError as error:
            if "already exists" not in str(error).lower():
                raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        client, self._redis = self._redis, None
        if client is not None:
            await client.aclose()

    async def drop(self) -> None:
        """Drop the collection's index and every key under its prefix, then close."""
        from redis.exceptions import ResponseError

        async def drop(r: Redis) -> None:
            try:
                await _command(r, "FT.DROPINDEX", self._index)
            except ResponseError as error:  # dropped already, by another process
                message = str(error).lower()
                if "unknown index" not in message and "no such index" not in message:
                    raise
            keys = [key async for key in r.scan_iter(match=self._prefix + "*", count=500)]
            if keys:
                await r.delete(*keys)

        try:
            await self._call(drop)
        finally:
            await self.__aexit__(None, None, None)

    async def _call(self, work: Callable[[Redis], Awaitable[_T]]) -> _T:
        from redis.exceptions import RedisError

        if self._redis is None:
            raise unreachable("Redis", self.url, RuntimeError("the store is not open"))
        try:
            return await work(self._redis)
        except (RedisError, OSError) as error:
            raise unreachable("Redis", self.url, error, secrets_of(self.url)) from None

    async def files(self) -> dict[str, str]:
        found = await self._call(lambda r: r.hgetall(self._key("files")))
        return {_text(path): _text(digest) for path, digest in found.items()}

    async def replace_file(
        self,
        file: SourceFile,
        chunks: Sequence[Chunk],
        vectors: npt.NDArray[np.float32] | None,
        *,
        start: int = 0,
        complete: bool = True,
    ) -> None:
        check_rows(vectors, len(chunks), self.dimensions)
        members = self._key("file", file.path)

        async def write(r: Redis) -> None:
            old = await r.smembers(members) if start == 0 else set()
            async with r.pipeline(transaction=True) as pipe:
                if old:
                    pipe.delete(*old)
                if start == 0:
                    pipe.delete(members)
                for index, chunk in enumerate(chunks, start=start):
                    key = self._key("chunk", f"{file.path}\x1f{index}")
                    fields: list[str | bytes] = [
                        *("text", chunk.text, "source", chunk.source),
                        *("record_id", chunk.record_id or "", "data", chunk_to_json(chunk)),
                    ]
                    if vectors is not None:
                        row = np.asarray(vectors[index - start], dtype=np.float32)
                        fields += ["vector", row.tobytes()]
                    pipe.hset(key, items=fields)
                    pipe.sadd(members, key)
                digest = file.content_hash if complete else PENDING
                pipe.hset(self._key("files"), file.path, digest)
                await pipe.execute()

        await self._call(write)

    async def delete_file(self, path: str) -> None:
        members = self._key("file", path)

        async def delete(r: Redis) -> None:
            old = await r.smembers(members)
            async with r.pipeline(transaction=True) as pipe:
                if old:
                    pipe.delete(*old)
                pipe.delete(members)
                pipe.hdel(self._key("files"), path)
                await pipe.execute()

        await self._call(delete)

    async def _search(self, *args: Any) -> list[tuple[Chunk, float]]:
        """FT.SEARCH's hits as (chunk, the score field)."""
        reply = await self._call(lambda r: _command(r, "FT.SEARCH", self._index, *args))
        hits: list[tuple[Chunk, float]] = []
        for position in range(1, len(reply), 2):
            values = reply[position + 1]
            if isinstance(values, list):
                fields = {_text(values[i]): values[i + 1] for i in range(0, len(values), 2)}
                hits.append((chunk_from_json(_text(fields["data"])), float(fields.get("s", 0))))
        return hits

    async def nearest(self, vector: npt.NDArray[np.float32], k: int) -> list[Scored]:
        if self.dimensions is None:
            return []
        blob = np.asarray(vector, dtype=np.float32).reshape(-1).tobytes()

        async def fetch(n: int) -> list[Scored]:
            found = await self._search(
                f"*=>[KNN {n} @vector $v AS s]",
                "PARAMS",
                2,
                "v",
                blob,
                "SORTBY",
                "s",
                "ASC",
                "RETURN",
                2,
                "data",
                "s",
                "LIMIT",
                0,
                n,
                "DIALECT",
                2,
            )
            return [Scored(chunk, 1.0 - distance) for chunk, distance in found]

        return await nearest_with_ties(fetch, k, await self.count())

    async def keyword(self, query: str, k: int) -> list[Scored]:
        terms = list(dict.fromkeys(words(query)))
        if not terms or k <= 0:
            return []
        # words only, each escaped where the query syntax could read it
        text = "|".join(_escape(term) for term in terms)
        reply = await self._call(
            lambda r: _command(
                r,
                "FT.SEARCH",
                self._index,
                f"@text:({text})",
                "SCORER",
                "BM25STD",
                "WITHSCORES",
                "RETURN",
                1,
                "data",
                "LIMIT",
                0,
                k,
                "DIALECT",
                2,
            )
        )
        hits: list[Scored] = []
        for position in range(1, len(reply), 3):
            score, values = float(reply[position + 1]), reply[position + 2]
            fields = {_text(values[i]): values[i + 1] for i in range(0, len(values), 2)}
            if score > 0:
                hits.append(Scored(chunk_from_json(_text(fields["data"])), score))
        return hits

    async def record_chunks(self, source: str, record_id: str) -> list[Chunk]:
        keys = await self._call(lambda r: r.smembers(self._key("file", source)))
        if not keys:
            return []
        datas = await self._call(lambda r: _datas(r, keys))
        chunks = [chunk_from_json(data) for data in datas if data is not None]
        return sorted(
            (chunk for chunk in chunks if chunk.record_id == record_id),
            key=lambda chunk: chunk.position,
        )

    async def count(self) -> int:
        info = await self._call(lambda r: _command(r, "FT.INFO", self._index))
        fields = {_text(info[i]): info[i + 1] for i in range(0, len(info), 2)}
        return int(_text(fields["num_docs"]))


async def _datas(r: Redis, keys: set[Any]) -> list[str | None]:
    async with r.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.hget(key, "data")
        replies = await pipe.execute()
    return [None if reply is None else _text(reply) for reply in replies]


async def _command(r: Redis, *args: Any) -> Any:
    """A search module command (redis-py leaves them untyped)."""
    return await r.execute_command(*args)  # type: ignore[no-untyped-call]


def _escape(term: str) -> str:
    """A word with every character but letters and digits escaped for RediSearch."""
    return "".join(ch if ch.isalnum() else f"\\{ch}" for ch in term)
