"""A search tool's index: keeps a store in step with the sources, and answers queries.

`sync()` is incremental: files whose content hash the store already holds are skipped,
changed files replace their chunks, deleted files lose theirs. Embeddings are made in
batches across files, and the embedder's cache means a chunk seen before costs nothing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from holodeck.rag._types import Chunk, IngestIssue, Scored, SourceFile
from holodeck.rag.fusion import fuse, top_with_ties
from holodeck.rag.ingest import IngestOptions, chunk_file, source_files
from holodeck.rag.results import SearchResult, result_of
from holodeck.rag.stores import open_store
from holodeck.rag.stores._protocol import StoreLocation, VectorStore

if TYPE_CHECKING:
    import numpy.typing as npt

    from holodeck.rag.embeddings._protocol import Embedder

Mode = Literal["semantic", "keyword", "hybrid", "exact"]
EMBED_BATCH = 256  # texts per embedding call: bounds memory and moves the progress bar
# Progress of an ingestion: (what is happening, done, total).
Progress = Callable[[str, int, int], None]


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
    ) -> None:
        self.name = name
        self.ingest = ingest
        self.location = location
        self.collection = collection
        self.embedder = embedder
        self.settings = settings
        self._dimensions = dimensions
        self._store: VectorStore | None = None
        self._stack = contextlib.AsyncExitStack()

    @property
    def store(self) -> VectorStore:
        if self._store is None:
            raise RuntimeError(f"search index `{self.name}` is not open")
        return self._store

    async def __aenter__(self) -> SearchIndex:
        dimensions = self._dimensions
        if self.embedder is not None and dimensions is None:
            dimensions = int((await self.embedder.embed(["dimensions"])).shape[1])
        store = open_store(self.location, self.collection, dimensions)
        self._store = await self._stack.enter_async_context(store)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._store = None
        await self._stack.aclose()

    async def sync(self, progress: Progress | None = None) -> SyncReport:
        """Bring the store in step with the source files."""
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
        parsed = await asyncio.to_thread(self._parse, changed, report, progress)
        report.chunks_embedded = await self._store_all(parsed, progress)
        report.chunks = await self.store.count()
        return report

    async def _store_all(
        self, parsed: list[tuple[SourceFile, list[Chunk]]], progress: Progress | None
    ) -> int:
        """Embed every chunk in batches across file boundaries (a big file moves the
        progress bar, small files share calls) and store each file once it is complete."""
        texts = [self._embedded_text(c) for _, chunks in parsed for c in chunks]
        what = "embedding" if self.embedder is not None else "indexing"
        if progress is not None:
            progress(what, 0, len(texts))
        rows: list[npt.NDArray[np.float32]] = []
        embedded = start = 0
        for file, chunks in parsed:
            end = start + len(chunks)
            while self.embedder is not None and embedded < end:
                batch = texts[embedded : embedded + EMBED_BATCH]
                rows.append(await self.embedder.embed(batch))
                embedded += len(batch)
                if progress is not None:
                    progress(what, embedded, len(texts))
            vectors = None
            if self.embedder is not None and chunks:
                done = np.concatenate(rows) if len(rows) > 1 else rows[0]
                vectors, rows = done[: len(chunks)], [done[len(chunks) :]]
            await self.store.replace_file(file, chunks, vectors)
            start = end
            if self.embedder is None and progress is not None:
                progress(what, end, len(texts))
        return embedded

    def _parse(
        self, files: Sequence[SourceFile], report: SyncReport, progress: Progress | None
    ) -> list[tuple[SourceFile, list[Chunk]]]:
        parsed = []
        for n, file in enumerate(files, start=1):
            chunks, issues = chunk_file(file, self.ingest)
            report.issues.extend(issues)
            parsed.append((file, chunks))
            if progress is not None:
                progress("reading", n, len(files))
        return parsed

    def _embedded_text(self, chunk: Chunk) -> str:
        if self.settings.contextual and chunk.heading_path:
            return " > ".join(chunk.heading_path) + "\n\n" + chunk.text
        return chunk.text

    async def search(self, query: str) -> list[SearchResult]:
        """The best chunks for `query`, ranked by the tool's search mode."""
        s = self.settings
        mode = s.mode if self.embedder is not None else _without_vectors(s.mode)
        wide = max(s.top_k * 4, 20)  # each list deeper than top_k, so fusion has material
        if mode == "semantic":
            return [result_of(x.chunk, x.score) for x in await self._semantic(query, s.top_k)]
        if mode == "keyword":
            ranked = await self._keyword(query, s.top_k)
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
        fused = top_with_ties(fuse(lists, k=s.rrf_k), s.top_k)
        return [result_of(scored.chunk, score) for scored, score in fused]

    async def _semantic(self, query: str, k: int) -> list[Scored]:
        assert self.embedder is not None
        vector: npt.NDArray[np.float32] = (await self.embedder.embed([query]))[0]
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


def _without_vectors(mode: Mode) -> Mode:
    """With no embedding model, semantic and hybrid searches fall back to keywords."""
    return "keyword" if mode in ("semantic", "hybrid") else mode
