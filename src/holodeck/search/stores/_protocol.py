"""What every vector store does, whatever keeps the data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Protocol, Self, runtime_checkable

from holodeck.search._types import Chunk, Scored, SourceFile

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

PENDING = ""  # the manifest's hash of a file whose parts are still being stored
StoreProvider = Literal["embedded", "postgres", "redis", "chromadb", "qdrant"]


@dataclass(frozen=True)
class StoreLocation:
    """Which store, and where: `url` for servers, `path` for embedded data on disk."""

    provider: StoreProvider
    path: Path  # embedded: the directory holding the data (project `.holodeck/vectors/`)
    url: str | None = None  # server stores: connection string / URL
    options: Mapping[str, str] = field(default_factory=dict)  # e.g. qdrant `api_key`


class VectorStore(Protocol):
    """One collection: the chunks of one tool's sources embedded by one model.

    `async with` opens the connection and creates the collection when missing. Vectors are
    float32 rows, L2-normalised by the embedder; `dimensions` is None for a collection
    searched by keywords only (no embedding model available)."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def files(self) -> dict[str, str]:
        """Each stored source file's path -> the content hash it was stored with."""
        ...

    async def replace_file(
        self,
        file: SourceFile,
        chunks: Sequence[Chunk],
        vectors: npt.NDArray[np.float32] | None,
        *,
        start: int = 0,
        complete: bool = True,
    ) -> None:
        """Store a file's chunks (and their vectors, one row each), dropping its old ones.

        A large file comes in parts, each numbered from `start` (the chunks stored before
        it): the first part (`start=0`) drops the old chunks, and until the part with
        `complete=True` the manifest lists the file with the hash `PENDING`, which matches
        no content: a run cut short leaves the file to be stored again, never taken for up
        to date."""
        ...

    async def delete_file(self, path: str) -> None:
        """Drop every chunk of a source file that no longer exists."""
        ...

    async def nearest(self, vector: npt.NDArray[np.float32], k: int) -> list[Scored]:
        """The k chunks most similar to `vector` by cosine similarity, best first.

        Ties are kept: every chunk scoring as high as the k-th is returned."""
        ...

    async def keyword(self, query: str, k: int) -> list[Scored]:
        """The k chunks that best match the query's words (BM25 or the store's own
        full-text ranking), best first; score > 0 for a match."""
        ...

    async def record_chunks(self, source: str, record_id: str) -> list[Chunk]:
        """Every chunk of one record, in position order (to rebuild the whole record)."""
        ...

    async def count(self) -> int:
        """How many chunks the collection holds."""
        ...


@runtime_checkable
class DroppableStore(Protocol):
    """A server store that can remove a collection whole (its tables or index, not only its
    rows): what a user made for one test case leaves behind otherwise."""

    async def drop(self) -> None:
        """Remove the collection; the store is closed afterwards."""
        ...
