"""Collections in ChromaDB: a server (`url`) or a directory (`path`, no server). Chroma
has no keyword ranking of its own, so `keyword` ranks the collection's texts with the
in-process BM25. The file manifest is a second collection beside the chunks. Chroma's
client is synchronous: its calls run in a worker thread. `chromadb` is imported on open."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from holodeck.errors import HoloDeckError
from holodeck.search._bm25 import bm25_rank
from holodeck.search._types import Chunk, Scored, SourceFile
from holodeck.search.stores._codec import chunk_from_json, chunk_to_json
from holodeck.search.stores._naming import safe_name
from holodeck.search.stores._protocol import PENDING, StoreLocation
from holodeck.search.stores._ranking import nearest_with_ties
from holodeck.search.stores._remote import check_dimensions, check_rows, missing, unreachable

_T = TypeVar("_T")
_BATCH = 1000
_PLACEHOLDER = [1.0]  # Chroma keeps a vector per entry; manifests and keyword-only need one


class ChromaStore:
    """The collection `collection` in the Chroma server at `location.url`, or in the
    Chroma directory `location.path` when there is no url."""

    def __init__(self, location: StoreLocation, collection: str, dimensions: int | None) -> None:
        self.location = location
        self.collection = collection
        self.dimensions = dimensions
        self._name = safe_name(collection, allowed=r"A-Za-z0-9_\-", max_len=50)
        self._where = location.url or str(location.path)
        self._client: Any = None
        self._chunks: Any = None
        self._files: Any = None

    async def _call(self, work: Callable[[], _T]) -> _T:
        try:
            return await asyncio.to_thread(work)
        except HoloDeckError:
            raise
        except Exception as error:  # the client's errors share no base class
            secrets = tuple(self.location.options.values())
            raise unreachable("ChromaDB", self._where, error, secrets) from None

    async def __aenter__(self) -> Self:
        try:
            import chromadb
        except ImportError:
            raise missing("chromadb", "chromadb") from None

        def connect() -> None:
            from chromadb.config import Settings

            settings = Settings(anonymized_telemetry=False)
            if self.location.url:
                parts = urlsplit(self.location.url)
                headers = {}
                if token := self.location.options.get("api_key"):
                    headers["x-chroma-token"] = token
                self._client = chromadb.HttpClient(
                    host=parts.hostname or "localhost",
                    port=parts.port or (443 if parts.scheme == "https" else 8000),
                    ssl=parts.scheme == "https",
                    headers=headers,
                    settings=settings,
                )
            else:
                self.location.path.mkdir(parents=True, exist_ok=True)
                self._client = chromadb.PersistentClient(
                    path=str(self.location.path), settings=settings
                )
            width = -1 if self.dimensions is None else self.dimensions
            self._chunks = self._client.get_or_create_collection(
                self._name,
                metadata={"hnsw:space": "cosine", "holodeck_dimensions": width},
                embedding_function=None,
            )
            stored = (self._chunks.metadata or {}).get("holodeck_dimensions", width)
            check_dimensions(
                "ChromaDB", self.collection, None if stored == -1 else int(stored), self.dimensions
            )
            self._files = self._client.get_or_create_collection(
                f"{self._name}_files", embedding_function=None
            )

        await self._call(connect)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._client = self._chunks = self._files = None

    async def files(self) -> dict[str, str]:
        found = await self._call(lambda: self._files.get(include=["metadatas"]))
        return {
            path: str(meta["hash"])
            for path, meta in zip(found["ids"], found["metadatas"] or [], strict=False)
        }

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
        first = start

        def write() -> None:
            if first == 0:
                self._chunks.delete(where={"source": file.path})
            for start in range(0, len(chunks), _BATCH):
                part = chunks[start : start + _BATCH]
                embeddings = (
                    [_PLACEHOLDER for _ in part]
                    if vectors is None
                    else np.asarray(vectors[start : start + _BATCH], dtype=np.float32).tolist()
                )
                self._chunks.add(
                    ids=[f"{file.path}\x1f{first + start + i}" for i in range(len(part))],
                    embeddings=embeddings,
                    documents=[chunk.text for chunk in part],
                    metadatas=[_metadata(chunk) for chunk in part],
                )
            self._files.upsert(
                ids=[file.path],
                embeddings=[_PLACEHOLDER],
                metadatas=[{"hash": file.content_hash if complete else PENDING}],
            )

        await self._call(write)

    async def delete_file(self, path: str) -> None:
        def delete() -> None:
            self._chunks.delete(where={"source": path})
            self._files.delete(ids=[path])

        await self._call(delete)

    async def nearest(self, vector: npt.NDArray[np.float32], k: int) -> list[Scored]:
        if self.dimensions is None:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1).tolist()

        async def fetch(n: int) -> list[Scored]:
            found = await self._call(
                lambda: self._chunks.query(
                    query_embeddings=[query], n_results=n, include=["metadatas", "distances"]
                )
            )
            return [
                Scored(chunk_from_json(str(meta["data"])), 1.0 - float(distance))
                for meta, distance in zip(found["metadatas"][0], found["distances"][0], strict=True)
            ]

        return await nearest_with_ties(fetch, k, await self.count())

    async def keyword(self, query: str, k: int) -> list[Scored]:
        if k <= 0:
            return []
        found = await self._call(lambda: self._chunks.get(include=["metadatas"]))
        chunks = [chunk_from_json(str(meta["data"])) for meta in found["metadatas"] or []]
        chunks.sort(key=lambda chunk: (chunk.source, chunk.position, chunk.id))
        ranked = bm25_rank([chunk.text for chunk in chunks], query)
        return [Scored(chunks[index], score) for index, score in ranked[:k]]

    async def record_chunks(self, source: str, record_id: str) -> list[Chunk]:
        found = await self._call(
            lambda: self._chunks.get(
                where={"$and": [{"source": source}, {"record_id": record_id}]},
                include=["metadatas"],
            )
        )
        chunks = [chunk_from_json(str(meta["data"])) for meta in found["metadatas"] or []]
        return sorted(chunks, key=lambda chunk: chunk.position)

    async def count(self) -> int:
        return int(await self._call(lambda: self._chunks.count()))


def _metadata(chunk: Chunk) -> dict[str, str]:
    """What Chroma filters on, and the whole chunk (its own metadata takes no None)."""
    fields = {"source": chunk.source, "data": chunk_to_json(chunk)}
    if chunk.record_id is not None:
        fields["record_id"] = chunk.record_id
    return fields
