"""A search tool's index: keeps a store in step with the sources, and answers queries.

`sync()` is incremental: files whose content hash the store already holds are skipped,
changed files replace their chunks, deleted files lose theirs. A file is read, chunked,
embedded and stored a batch of chunks at a time (`ingest.BATCH`), so memory stays flat
in the size of a file; the next batch is read while one is embedded. The embedder's
cache means a chunk seen before costs nothing.

The collection opened is the tool's (`collection`, named by what is read and how it is
cut) for the vectors of one producer (the model and where it runs) at one width, so
vectors of two models never meet. When the model answers with another width than the
store holds (a model replaced under its name), the index says so, opens the collection
of the new width and embeds the sources into it, during an ingestion or a query."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from holodeck.errors import ExecutionError
from holodeck.search._types import Chunk, IngestIssue, Scored, SourceFile
from holodeck.search.embeddings._protocol import producer_of
from holodeck.search.fusion import fuse, top_with_ties
from holodeck.search.ingest import BATCH, IngestOptions, file_batches, source_files
from holodeck.search.made_by import MadeBy
from holodeck.search.rerank import Reranker, rerank
from holodeck.search.results import SearchResult, result_of
from holodeck.search.stores import open_store
from holodeck.search.stores._protocol import StoreLocation, VectorStore

if TYPE_CHECKING:
    import numpy.typing as npt

    from holodeck.search.embeddings._protocol import Embedder

log = logging.getLogger("holodeck.search")

Mode = Literal["semantic", "keyword", "hybrid", "exact"]
EMBED_BATCH = 256  # texts per embedding call: bounds memory and moves the progress bar
# Progress of an ingestion: (what is happening, done, total).
Progress = Callable[[str, int, int], None]
# A file's chunks with their context lines in front (`rag.contextual.Contextualizer`).
Contextualize = Callable[[SourceFile, list[Chunk]], Awaitable[list[Chunk]]]


@dataclass(frozen=True)
class SearchSettings:
    mode: Mode = "semantic"
    top_k: int = 5
    min_score: float | None = None  # on cosine similarity; keyword scores are not filtered
    semantic_weight: float = 0.5
    keyword_weight: float = 0.5
    exact_weight: float = 0.0
    rrf_k: int = 60
    contextual: bool = False  # embed "Heading > Sub\n\ntext" rather than the text alone


@dataclass
class SyncReport:
    files: int = 0
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    chunks_embedded: int = 0
    chunks: int = 0
    issues: list[IngestIssue] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what changed about the vectors, a line each


class SearchIndex:
    """One search tool's data: `async with` opens the store; `sync()` brings it up to date;
    `search(query)` ranks chunks by the tool's mode."""

    def __init__(
        self,
        name: str,
        ingest: IngestOptions,
        location: StoreLocation,
        collection: str,
        embedder: Embedder | None,
        settings: SearchSettings,
        *,
        dimensions: int | None = None,
        made_by: MadeBy | None = None,
    ) -> None:
        self.name = name
        self.ingest = ingest
        self.location = location
        self.collection = collection
        self.embedder = embedder
        self.settings = settings
        self.made_by = made_by
        self._dimensions = dimensions
        self._width: int | None = None  # of the vectors in the open collection
        self._notes: list[str] = []
        self._reopening = asyncio.Lock()
        # set by the tool: context lines before embedding, a second ranking of results
        self.contextualize: Contextualize | None = None
        self.reranker: Reranker | None = None
        self.rerank_candidates = 0
        self.batch_size = BATCH  # chunks read, embedded and stored at a time
        self._store: VectorStore | None = None
        self._stack = contextlib.AsyncExitStack()

    @property
    def store(self) -> VectorStore:
        if self._store is None:
            raise RuntimeError(f"search index `{self.name}` is not open")
        return self._store

    async def __aenter__(self) -> SearchIndex:
        width = self._dimensions
        if self.embedder is not None and width is None:
            width = int((await self.embedder.embed(["dimensions"])).shape[1])
        await self._open(width)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._store = None
        await self._stack.aclose()

    @property
    def producer(self) -> str | None:
        """What makes this index's vectors, and their width; None: keywords only."""
        if self.embedder is None:
            return None
        return f"{producer_of(self.embedder)} ({self._width} dimensions)"

    def store_collection(self, width: int | None) -> str:
        """The collection holding the vectors of this producer at `width`."""
        if self.embedder is None:
            return f"{self.collection}_keywords"
        made = f"{producer_of(self.embedder)}\n{width}".encode()
        return f"{self.collection}_{hashlib.sha256(made).hexdigest()[:10]}"

    async def _open(self, width: int | None, *, announce: bool = True) -> None:
        store = open_store(self.location, self.store_collection(width), width)
        self._store = await self._stack.enter_async_context(store)
        self._width = width
        before = self.made_by.get(self.collection) if self.made_by is not None else None
        now = self.producer
        if announce and before is not None and now is not None and before != now:
            self._notes.append(
                f"{self.name}: vectors were made by {before}; now by {now}, whose "
                "vectors are kept apart: what it has not embedded yet is embedded now"
            )

    async def _reopen(self, width: int) -> None:
        """The model now gives vectors of `width`: the collection of that width instead."""
        self._notes.append(
            f"{self.name}: {producer_of(self.embedder) if self.embedder else 'the model'} "
            f"now gives {width}-dimension vectors, not {self._width}: "
            "its sources are embedded again"
        )
        self._store = None
        await self._stack.aclose()
        self._stack = contextlib.AsyncExitStack()
        await self._open(width, announce=False)

    async def rebuild(self) -> int:
        """Drop what is stored and the cached vectors of this producer (`holodeck ingest
        --rebuild`), so the next `sync()` embeds everything again; the files dropped."""
        stored = await self.store.files()
        for path in sorted(stored):
            await self.store.delete_file(path)
        forget = getattr(self.embedder, "forget", None)
        if forget is not None:
            await forget()
        return len(stored)

    async def sync(self, progress: Progress | None = None) -> SyncReport:
        """Bring the store in step with the source files; `notes` says, a line each, what
        changed about the vectors (another model, another width)."""
        try:
            report = await self._sync(progress)
        except _WidthChanged as changed:
            await self._reopen(changed.width)
            try:
                report = await self._sync(progress)
            except _WidthChanged as again:
                raise ExecutionError(
                    f"search tool `{self.name}`: the embedding model answers with vectors "
                    f"of {changed.width}, then {again.width} dimensions",
                    hint="check the model the endpoint serves: one model gives one width",
                ) from None
        report.notes, self._notes = self._notes, []
        if self.made_by is not None and self.producer is not None:
            self.made_by.set(self.collection, self.producer)
        return report

    async def _sync(self, progress: Progress | None) -> SyncReport:
        files = await asyncio.to_thread(source_files, self.ingest)
        stored = await self.store.files()
        report = SyncReport(files=len(files))
        present = {f.path for f in files}
        for path in sorted(set(stored) - present):
            await self.store.delete_file(path)
            report.removed.append(path)
        changed = [f for f in files if stored.get(f.path) != f.content_hash]
        report.changed = [f.path for f in changed]
        if not changed:
            report.chunks = await self.store.count()
            return report
        tally = _Tally("embedding" if self.embedder is not None else "indexing", progress)
        parts = self._parts(changed, report, progress)
        reading = asyncio.ensure_future(asyncio.to_thread(next, parts, None))
        pending: list[_Part] = []
        try:
            while (part := await reading) is not None:
                reading = asyncio.ensure_future(asyncio.to_thread(next, parts, None))
                pending.append(part)
                tally.read(len(part.chunks))
                if sum(len(p.chunks) for p in pending) >= self.batch_size:
                    await self._store_parts(pending, tally)
                    pending = []
            await self._store_parts(pending, tally)
        finally:
            if not reading.done():  # cancelled or failed: let the reader finish its batch
                await asyncio.gather(reading, return_exceptions=True)
            parts.close()
        report.chunks_embedded = tally.embedded
        report.chunks = await self.store.count()
        return report

    def _parts(
        self, files: Sequence[SourceFile], report: SyncReport, progress: Progress | None
    ) -> Generator[_Part, None, None]:
        """The changed files' chunks, a batch at a time, then a last empty part for each
        file that tells the store it is complete. Runs in a worker thread, a part ahead."""
        for number, file in enumerate(files, start=1):
            start = 0
            for chunks, issues in file_batches(file, self.ingest, self.batch_size):
                report.issues.extend(issues)
                if chunks:
                    yield _Part(file, chunks, start, complete=False)
                    start += len(chunks)
            yield _Part(file, [], start, complete=True)
            if progress is not None:
                progress("reading", number, len(files))

    async def _store_parts(self, parts: list[_Part], tally: _Tally) -> None:
        """Embed the parts' chunks together (small files share calls), then store each."""
        if self.contextualize is not None:
            parts = [replace(p, chunks=await self.contextualize(p.file, p.chunks)) for p in parts]
        chunks = [chunk for part in parts for chunk in part.chunks]
        vectors = await self._embed(chunks, tally)
        if vectors is not None and vectors.shape[1] != self._width:
            raise _WidthChanged(int(vectors.shape[1]))
        offset = 0
        for part in parts:
            rows = None
            if vectors is not None and part.chunks:
                rows = vectors[offset : offset + len(part.chunks)]
            offset += len(part.chunks)
            await self.store.replace_file(
                part.file, part.chunks, rows, start=part.start, complete=part.complete
            )

    async def _embed(self, chunks: list[Chunk], tally: _Tally) -> npt.NDArray[np.float32] | None:
        if self.embedder is None or not chunks:
            tally.done(len(chunks))
            return None
        texts = [self._embedded_text(c) for c in chunks]
        rows: list[npt.NDArray[np.float32]] = []
        for start in range(0, len(texts), EMBED_BATCH):
            rows.append(await self.embedder.embed(texts[start : start + EMBED_BATCH]))
            tally.done(len(rows[-1]))
        return np.concatenate(rows) if len(rows) > 1 else rows[0]

    def _embedded_text(self, chunk: Chunk) -> str:
        if self.settings.contextual and chunk.heading_path:
            return " > ".join(chunk.heading_path) + "\n\n" + chunk.text
        return chunk.text

    async def search(self, query: str) -> list[SearchResult]:
        """The best chunks for `query`, ranked by the tool's search mode, then by the
        reranker when there is one (it reads `rerank_candidates` results)."""
        if self.reranker is None:
            return await self._ranked(query, self.settings.top_k)
        found = await self._ranked(query, max(self.rerank_candidates, self.settings.top_k))
        return await rerank(query, found, self.reranker, self.settings.top_k)

    async def _ranked(self, query: str, top_k: int) -> list[SearchResult]:
        s = self.settings
        mode = s.mode if self.embedder is not None else _without_vectors(s.mode)
        wide = max(top_k * 4, 20)  # each list deeper than top_k, so fusion has material
        if mode == "semantic":
            return [result_of(x.chunk, x.score) for x in await self._semantic(query, top_k)]
        if mode == "keyword":
            ranked = await self._keyword(query, top_k)
            top = ranked[0].score if ranked else 1.0
            return [result_of(x.chunk, x.score / top) for x in ranked]
        lists: list[tuple[Sequence[Scored], float]] = []
        if mode == "exact":
            lists.append((await self._exact(query, wide), 1.0))
        else:
            if self.embedder is not None and s.semantic_weight > 0:
                lists.append((await self._semantic(query, wide), s.semantic_weight))
            if s.keyword_weight > 0:
                lists.append((await self._keyword(query, wide), s.keyword_weight))
            if s.exact_weight > 0:
                lists.append((await self._exact(query, wide), s.exact_weight))
        fused = top_with_ties(fuse(lists, k=s.rrf_k), top_k)
        return [result_of(scored.chunk, score) for scored, score in fused]

    async def _semantic(self, query: str, k: int) -> list[Scored]:
        assert self.embedder is not None
        vector: npt.NDArray[np.float32] = (await self.embedder.embed([query]))[0]
        if len(vector) != self._width:
            async with self._reopening:  # one query re-embeds; the others wait for it
                if len(vector) != self._width:
                    await self._reopen(len(vector))
                    report = await self.sync()
                    for note in report.notes:
                        log.warning("search tool %s", note)
        found = await self.store.nearest(vector, k)
        if self.settings.min_score is not None:
            found = [x for x in found if x.score >= self.settings.min_score]
        return found

    async def _keyword(self, query: str, k: int) -> list[Scored]:
        return await self.store.keyword(query, k)

    async def _exact(self, query: str, k: int) -> list[Scored]:
        """Chunks that contain the query as written (case aside), ranked by keywords."""
        needle = " ".join(query.split()).casefold()
        if not needle:
            return []
        candidates = await self.store.keyword(query, max(k * 10, 200))
        return [x for x in candidates if needle in " ".join(x.chunk.text.split()).casefold()][:k]


class _WidthChanged(Exception):
    """The model answered with vectors of another width than the open collection's."""

    def __init__(self, width: int) -> None:
        super().__init__(width)
        self.width = width


@dataclass(frozen=True)
class _Part:
    """Chunks of one file, numbered from `start` in it; `complete`: the file's last part."""

    file: SourceFile
    chunks: list[Chunk]
    start: int
    complete: bool


class _Tally:
    """Progress of a sync's embedding: chunks done of those read so far (the total grows
    as files are read, a batch at a time)."""

    def __init__(self, what: str, progress: Progress | None) -> None:
        self.what = what
        self.progress = progress
        self.total = 0
        self.embedded = 0
        self._done = 0

    def read(self, count: int) -> None:
        self.total += count

    def done(self, count: int) -> None:
        self._done += count
        if self.what == "embedding":
            self.embedded += count
        if self.progress is not None:
            self.progress(self.what, self._done, self.total)


def _without_vectors(mode: Mode) -> Mode:
    """With no embedding model, semantic and hybrid searches fall back to keywords."""
    return "keyword" if mode in ("semantic", "hybrid") else mode
