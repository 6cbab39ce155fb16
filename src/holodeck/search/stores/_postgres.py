"""Collections in PostgreSQL with pgvector: one table of chunks (vector column with an
HNSW cosine index, full-text column ranked by ts_rank_cd) and one of files per collection;
the collections' widths in `holodeck_vector_collections`. `psycopg` is imported on open."""

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
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

_T = TypeVar("_T")
_CONNECT_TIMEOUT_S = 10


class PostgresStore:
    """The collection `collection` in the PostgreSQL database at `url`."""

    def __init__(self, url: str, collection: str, dimensions: int | None) -> None:
        self.url = url
        self.collection = collection
        self.dimensions = dimensions
        base = safe_name(collection.lower(), allowed=r"a-z0-9_", max_len=40)
        self._chunks = f"hd_{base}_chunks"
        self._files = f"hd_{base}_files"
        self._pool: AsyncConnectionPool[Any] | None = None

    def _sql(self, statement: str) -> Any:
        from psycopg import sql

        return sql.SQL(statement).format(
            chunks=sql.Identifier(self._chunks),
            files=sql.Identifier(self._files),
            hnsw=sql.Identifier(f"{self._chunks}_hnsw"),
            tsv=sql.Identifier(f"{self._chunks}_tsv"),
            record=sql.Identifier(f"{self._chunks}_record"),
        )

    async def __aenter__(self) -> Self:
        try:
            import psycopg
            from psycopg_pool import AsyncConnectionPool
        except ImportError:
            raise missing("psycopg", "pgvector") from None
        try:
            from pgvector.psycopg import register_vector_async
        except ImportError:
            raise missing("pgvector", "pgvector") from None
        try:
            async with await psycopg.AsyncConnection.connect(
                self.url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT_S
            ) as db:
                await self._create(db)
            self._pool = AsyncConnectionPool(
                self.url,
                min_size=1,
                max_size=4,
                kwargs={"autocommit": True, "connect_timeout": _CONNECT_TIMEOUT_S},
                configure=register_vector_async,
                timeout=_CONNECT_TIMEOUT_S,
                open=False,
            )
            await self._pool.open()
        except psycopg.Error as error:
            raise unreachable("PostgreSQL", self.url, error, secrets_of(self.url)) from None
        return self

    async def _create(self, db: AsyncConnection[Any]) -> None:
        async with db.transaction():
            # processes opening the same collection together create it one at a time
            await db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self._chunks,))
            await db.execute("CREATE EXTENSION IF NOT EXISTS vector")
            await db.execute(
                "CREATE TABLE IF NOT EXISTS holodeck_vector_collections "
                "(name TEXT PRIMARY KEY, dimensions INTEGER)"
            )
            cursor = await db.execute(
                "SELECT dimensions FROM holodeck_vector_collections WHERE name = %s",
                (self._chunks,),
            )
            row = await cursor.fetchone()
            if row is not None:
                check_dimensions("PostgreSQL", self.collection, row[0], self.dimensions)
                return
            vector = "" if self.dimensions is None else f", embedding vector({self.dimensions})"
            await db.execute(
                self._sql(
                    "CREATE TABLE IF NOT EXISTS {chunks} (row BIGSERIAL PRIMARY KEY, "
                    "source TEXT NOT NULL, record_id TEXT, position INTEGER NOT NULL, "
                    "data TEXT NOT NULL, body TEXT NOT NULL, "
                    "tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED"
                    + vector
                    + ")"
                )
            )
            await db.execute(
                self._sql("CREATE INDEX IF NOT EXISTS {tsv} ON {chunks} USING gin (tsv)")
            )
            await db.execute(
                self._sql(
                    "CREATE INDEX IF NOT EXISTS {record} ON {chunks} (source, record_id, position)"
                )
            )
            if self.dimensions is not None and self.dimensions <= 2000:  # HNSW's limit
                await db.execute(
                    self._sql(
                        "CREATE INDEX IF NOT EXISTS {hnsw} ON {chunks} "
                        "USING hnsw (embedding vector_cosine_ops)"
                    )
                )
            await db.execute(
                self._sql(
                    "CREATE TABLE IF NOT EXISTS {files} (path TEXT PRIMARY KEY, hash TEXT NOT NULL)"
                )
            )
            await db.execute(
                "INSERT INTO holodeck_vector_collections VALUES (%s, %s)",
                (self._chunks, self.dimensions),
            )

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def drop(self) -> None:
        """Drop the collection's tables (their indexes with them) and its entry in the
        collections list, then close."""

        async def drop(db: AsyncConnection[Any]) -> None:
            async with db.transaction():
                await db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self._chunks,))
                await db.execute(self._sql("DROP TABLE IF EXISTS {chunks}, {files}"))
                await db.execute(
                    "DELETE FROM holodeck_vector_collections WHERE name = %s", (self._chunks,)
                )

        try:
            await self._run(drop)
        finally:
            await self.__aexit__(None, None, None)

    async def _run(self, work: Callable[[AsyncConnection[Any]], Awaitable[_T]]) -> _T:
        import psycopg

        if self._pool is None:
            raise unreachable("PostgreSQL", self.url, RuntimeError("the store is not open"))
        try:
            async with self._pool.connection() as db:
                return await work(db)
        except psycopg.Error as error:
            raise unreachable("PostgreSQL", self.url, error, secrets_of(self.url)) from None

    async def files(self) -> dict[str, str]:
        async def read(db: AsyncConnection[Any]) -> dict[str, str]:
            cursor = await db.execute(self._sql("SELECT path, hash FROM {files}"))
            return {path: digest for path, digest in await cursor.fetchall()}

        return await self._run(read)

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
        rows = [
            (c.source, c.record_id, c.position, chunk_to_json(c), c.text)
            + (() if vectors is None else (np.asarray(vectors[i], dtype=np.float32),))
            for i, c in enumerate(chunks)
        ]
        insert = (
            "INSERT INTO {chunks} (source, record_id, position, data, body) "
            "VALUES (%s, %s, %s, %s, %s)"
            if vectors is None
            else "INSERT INTO {chunks} (source, record_id, position, data, body, embedding) "
            "VALUES (%s, %s, %s, %s, %s, %s)"
        )

        async def write(db: AsyncConnection[Any]) -> None:
            async with db.transaction():
                if start == 0:
                    await db.execute(
                        self._sql("DELETE FROM {chunks} WHERE source = %s"), (file.path,)
                    )
                if rows:
                    async with db.cursor() as cursor:
                        await cursor.executemany(self._sql(insert), rows)
                await db.execute(
                    self._sql(
                        "INSERT INTO {files} VALUES (%s, %s) "
                        "ON CONFLICT (path) DO UPDATE SET hash = EXCLUDED.hash"
                    ),
                    (file.path, file.content_hash if complete else PENDING),
                )

        await self._run(write)

    async def delete_file(self, path: str) -> None:
        async def delete(db: AsyncConnection[Any]) -> None:
            async with db.transaction():
                await db.execute(self._sql("DELETE FROM {chunks} WHERE source = %s"), (path,))
                await db.execute(self._sql("DELETE FROM {files} WHERE path = %s"), (path,))

        await self._run(delete)

    async def nearest(self, vector: npt.NDArray[np.float32], k: int) -> list[Scored]:
        if self.dimensions is None:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)

        async def fetch(n: int) -> list[Scored]:
            async def search(db: AsyncConnection[Any]) -> list[Scored]:
                async with db.transaction():
                    # the index looks at no more candidates than ef_search; ordering by the
                    # distance alone lets the HNSW index answer
                    await db.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(1000, n))}")
                    cursor = await db.execute(
                        self._sql(
                            "SELECT data, 1 - (embedding <=> %s) FROM {chunks} "
                            "ORDER BY embedding <=> %s LIMIT %s"
                        ),
                        (query, query, n),
                    )
                    return [
                        Scored(chunk_from_json(d), float(s)) for d, s in await cursor.fetchall()
                    ]

            return await self._run(search)

        return await nearest_with_ties(fetch, k, await self.count())

    async def keyword(self, query: str, k: int) -> list[Scored]:
        terms = list(dict.fromkeys(words(query)))
        if not terms or k <= 0:
            return []
        # plain words joined by `or`: websearch_to_tsquery never fails on its input
        text = " or ".join(terms)

        async def search(db: AsyncConnection[Any]) -> list[Scored]:
            cursor = await db.execute(
                self._sql(
                    "SELECT data, ts_rank_cd(tsv, q) AS rank "
                    "FROM {chunks}, websearch_to_tsquery('english', %s) q "
                    "WHERE tsv @@ q ORDER BY rank DESC, row LIMIT %s"
                ),
                (text, k),
            )
            return [Scored(chunk_from_json(d), float(s)) for d, s in await cursor.fetchall()]

        return [hit for hit in await self._run(search) if hit.score > 0]

    async def record_chunks(self, source: str, record_id: str) -> list[Chunk]:
        async def read(db: AsyncConnection[Any]) -> list[Chunk]:
            cursor = await db.execute(
                self._sql(
                    "SELECT data FROM {chunks} WHERE source = %s AND record_id = %s "
                    "ORDER BY position"
                ),
                (source, record_id),
            )
            return [chunk_from_json(data) for (data,) in await cursor.fetchall()]

        return await self._run(read)

    async def count(self) -> int:
        async def read(db: AsyncConnection[Any]) -> int:
            cursor = await db.execute(self._sql("SELECT count(*) FROM {chunks}"))
            row = await cursor.fetchone()
            return int(row[0]) if row else 0

        return await self._run(read)
