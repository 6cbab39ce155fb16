"""Collections in Qdrant: a server (`url`, `api_key` in the options) or qdrant-client's
local mode in a directory (`path`, no server). Qdrant ranks no keywords, so `keyword`
ranks the collection's texts with the in-process BM25. The file manifest is a second
collection (payload only) beside the chunks. `qdrant_client` is imported on open."""

from __future__ import annotations

import logging
import uuid
import warnings
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from holodeck.errors import HoloDeckError
from holodeck.net import loopback_name
from holodeck.search._bm25 import bm25_rank
from holodeck.search._types import Chunk, Scored, SourceFile
from holodeck.search.stores._codec import chunk_from_json, chunk_to_json
from holodeck.search.stores._naming import safe_name
from holodeck.search.stores._protocol import PENDING, StoreLocation
from holodeck.search.stores._ranking import nearest_with_ties
from holodeck.search.stores._remote import (
    check_dimensions,
    check_rows,
    masked,
    missing,
    unreachable,
)

if TYPE_CHECKING:
    from qdrant_client import AsyncQdrantClient

log = logging.getLogger("holodeck.search")
_T = TypeVar("_T")
_BATCH = 512
_PAGE = 1024


# Local mode lets one client at a time use a directory: the collections of one directory
# open in this process share its client, closed when the last of them closes.
_LOCAL: dict[Path, tuple[AsyncQdrantClient, int]] = {}


def server_client(url: str, api_key: str | None) -> AsyncQdrantClient:
    """A client of the Qdrant server at `url`. qdrant-client warns (a Python warning, with
    its own source line) whenever a key goes over http; this says it in one line, and only
    when the key leaves this machine."""
    from qdrant_client import AsyncQdrantClient

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Api key is used with an insecure connection")
        client = AsyncQdrantClient(
            url=url,
            api_key=api_key,
            timeout=10,
            check_compatibility=False,  # a request of its own, before any other
        )
    parts = urlsplit(url)
    if api_key and parts.scheme == "http" and not loopback_name(parts.hostname or ""):
        log.warning(
            "Qdrant vector store at %s: its api_key goes over plain http; use an https:// url",
            masked(url),
        )
    return client


def _open_local(path: Path) -> AsyncQdrantClient:
    from qdrant_client import AsyncQdrantClient

    key = path.resolve()
    client, users = _LOCAL.get(key, (None, 0))
    if client is None:
        path.mkdir(parents=True, exist_ok=True)
        client = AsyncQdrantClient(path=str(path))
    _LOCAL[key] = (client, users + 1)
    return client


async def _close_local(path: Path) -> None:
    key = path.resolve()
    client, users = _LOCAL.pop(key)
    if users > 1:
        _LOCAL[key] = (client, users - 1)
    else:
        await client.close()


def _point_id(path: str, index: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{path}\x1f{index}"))


class QdrantStore:
    """The collection `collection` in the Qdrant at `location.url`, or in qdrant-client's
    local mode under `location.path` when there is no url."""

    def __init__(self, location: StoreLocation, collection: str, dimensions: int | None) -> None:
        self.location = location
        self.collection = collection
        self.dimensions = dimensions
        self._name = safe_name(collection, allowed=r"A-Za-z0-9_\-", max_len=80)
        self._files = f"{self._name}_files"
        self._where = location.url or str(location.path)
        self._client: AsyncQdrantClient | None = None

    async def _call(self, work: Callable[[AsyncQdrantClient], Awaitable[_T]]) -> _T:
        if self._client is None:
            raise unreachable("Qdrant", self._where, RuntimeError("the store is not open"))
        try:
            return await work(self._client)
        except HoloDeckError:
            raise
        except Exception as error:  # the client's errors share no base class
            raise unreachable(
                "Qdrant", self._where, error, tuple(self.location.options.values())
            ) from None

    async def __aenter__(self) -> Self:
        try:
            import qdrant_client  # noqa: F401  # here, to name the extra when it is missing
        except ImportError:
            raise missing("qdrant-client", "qdrant") from None
        try:
            if self.location.url:
                self._client = server_client(
                    self.location.url, self.location.options.get("api_key")
                )
            else:
                self._client = _open_local(self.location.path)
        except Exception as error:  # a local directory another process holds, a bad url
            raise unreachable("Qdrant", self._where, error) from None
        await self._call(self._create)
        return self

    async def _create(self, client: AsyncQdrantClient) -> None:
        from qdrant_client import models

        if not await client.collection_exists(self._name):
            vectors: Any = (
                {}
                if self.dimensions is None
                else models.VectorParams(size=self.dimensions, distance=models.Distance.COSINE)
            )
            await client.create_collection(self._name, vectors_config=vectors)
        info = await client.get_collection(self._name)
        params = info.config.params.vectors
        stored = params.size if isinstance(params, models.VectorParams) else None
        check_dimensions("Qdrant", self.collection, stored, self.dimensions)
        if not await client.collection_exists(self._files):
            await client.create_collection(self._files, vectors_config={})
        if self.location.url:  # local mode filters without indexes
            for field in ("source", "record_id"):
                await client.create_payload_index(
                    self._name, field, models.PayloadSchemaType.KEYWORD
                )

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        if self.location.url:
            await client.close()
        else:
            await _close_local(self.location.path)

    async def _scroll(self, client: AsyncQdrantClient, name: str, where: Any = None) -> list[Any]:
        points: list[Any] = []
        offset: Any = None
        while True:
            page, offset = await client.scroll(
                name, scroll_filter=where, limit=_PAGE, offset=offset, with_payload=True
            )
            points += page
            if offset is None:
                return points

    async def files(self) -> dict[str, str]:
        points = await self._call(lambda c: self._scroll(c, self._files))
        return {str(p.payload["path"]): str(p.payload["hash"]) for p in points if p.payload}

    def _source_is(self, path: str, record_id: str | None = None) -> Any:
        from qdrant_client import models

        must = [models.FieldCondition(key="source", match=models.MatchValue(value=path))]
        if record_id is not None:
            must.append(
                models.FieldCondition(key="record_id", match=models.MatchValue(value=record_id))
            )
        return models.Filter(must=list(must))

    async def replace_file(
        self,
        file: SourceFile,
        chunks: Sequence[Chunk],
        vectors: npt.NDArray[np.float32] | None,
        *,
        start: int = 0,
        complete: bool = True,
    ) -> None:
        from qdrant_client import models

        check_rows(vectors, len(chunks), self.dimensions)
        first = start

        async def write(client: AsyncQdrantClient) -> None:
            if first == 0:
                await client.delete(self._name, points_selector=self._source_is(file.path))
            for start in range(0, len(chunks), _BATCH):
                points = [
                    models.PointStruct(
                        id=_point_id(file.path, first + start + i),
                        vector={}
                        if vectors is None
                        else np.asarray(vectors[start + i], dtype=np.float32).tolist(),
                        payload={
                            "source": chunk.source,
                            "record_id": chunk.record_id,
                            "data": chunk_to_json(chunk),
                        },
                    )
                    for i, chunk in enumerate(chunks[start : start + _BATCH])
                ]
                await client.upsert(self._name, points=points)
            await client.upsert(
                self._files,
                points=[
                    models.PointStruct(
                        id=_point_id(file.path, -1),
                        vector={},
                        payload={
                            "path": file.path,
                            "hash": file.content_hash if complete else PENDING,
                        },
                    )
                ],
            )

        await self._call(write)

    async def delete_file(self, path: str) -> None:
        async def delete(client: AsyncQdrantClient) -> None:
            await client.delete(self._name, points_selector=self._source_is(path))
            await client.delete(self._files, points_selector=[_point_id(path, -1)])

        await self._call(delete)

    async def nearest(self, vector: npt.NDArray[np.float32], k: int) -> list[Scored]:
        if self.dimensions is None:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1).tolist()

        async def fetch(n: int) -> list[Scored]:
            found = await self._call(
                lambda c: c.query_points(self._name, query=query, limit=n, with_payload=True)
            )
            return [
                Scored(chunk_from_json(str(p.payload["data"])), float(p.score))
                for p in found.points
                if p.payload
            ]

        return await nearest_with_ties(fetch, k, await self.count())

    async def keyword(self, query: str, k: int) -> list[Scored]:
        if k <= 0:
            return []
        points = await self._call(lambda c: self._scroll(c, self._name))
        chunks = [chunk_from_json(str(p.payload["data"])) for p in points if p.payload]
        chunks.sort(key=lambda chunk: (chunk.source, chunk.position, chunk.id))
        ranked = bm25_rank([chunk.text for chunk in chunks], query)
        return [Scored(chunks[index], score) for index, score in ranked[:k]]

    async def record_chunks(self, source: str, record_id: str) -> list[Chunk]:
        points = await self._call(
            lambda c: self._scroll(c, self._name, self._source_is(source, record_id))
        )
        chunks = [chunk_from_json(str(p.payload["data"])) for p in points if p.payload]
        return sorted(chunks, key=lambda chunk: chunk.position)

    async def count(self) -> int:
        found = await self._call(lambda c: c.count(self._name, exact=True))
        return int(found.count)
