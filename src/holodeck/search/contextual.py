"""Contextual retrieval: a line situating each chunk in its document, written by a model
before the chunk is embedded.

The context model is shown the document (its beginning and end when it is long) and one
chunk, and answers with a short line saying where the chunk sits and what it is about.
The line goes in front of the chunk's text, so it is embedded, keyword-indexed and
returned with it. Lines are cached by the hashes of the document and the chunk
(`ContextCache`): re-ingesting, even into a new store, asks the model nothing again.

With the offline `test` model, `TitleContextWriter` writes the line without a model: the
document's first line (its title), so offline runs exercise the same path.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from holodeck.search._types import Chunk, SourceFile
from holodeck.search.context_cache import ContextCache
from holodeck.search.ingest import decode, read_pdf
from holodeck.search.rerank import Ask

DOCUMENT_CHARS = 24_000  # of a document shown per request: its first and last halves
PROMPT = """<document>
{document}
</document>

Here is a chunk of that document:

<chunk>
{chunk}
</chunk>

Write one short sentence that situates this chunk within the whole document, to improve \
search retrieval of the chunk. Answer with that sentence only."""


class ContextWriter(Protocol):
    """Writes the context line of a chunk; `name` keys the cache."""

    @property
    def name(self) -> str: ...

    async def write(self, document: str, chunk: str) -> str: ...


class ModelContextWriter:
    """A chat model writes each line (`ask` sends it one prompt)."""

    def __init__(self, ask: Ask, name: str) -> None:
        self.ask = ask
        self.name = name

    async def write(self, document: str, chunk: str) -> str:
        answer = await self.ask(PROMPT.format(document=shown(document), chunk=chunk))
        return " ".join(answer.split())


class TitleContextWriter:
    """Offline: the document's first line, as `From "<title>".`"""

    name = "offline-title"

    async def write(self, document: str, chunk: str) -> str:
        first = next((line for line in document.splitlines() if line.strip()), "")
        title = " ".join(first.strip().lstrip("#").split())[:120]
        return f'From "{title}".' if title else ""


def shown(document: str) -> str:
    """The document as a request shows it: whole, or its first and last halves."""
    if len(document) <= DOCUMENT_CHARS:
        return document
    half = DOCUMENT_CHARS // 2
    return f"{document[:half]}\n\n[... document shortened ...]\n\n{document[-half:]}"


class Contextualizer:
    """Puts each chunk's context line in front of its text (`await contextualizer(file,
    chunks)`), asking `writer` only for lines the cache at `cache_path` lacks, at most
    `concurrency` at once."""

    def __init__(
        self, writer: ContextWriter, root: Path, cache_path: Path, concurrency: int = 10
    ) -> None:
        self.writer = writer
        self.root = root
        self.cache = ContextCache(cache_path, writer.name)
        self.limit = asyncio.Semaphore(concurrency)

    async def __call__(self, file: SourceFile, chunks: Sequence[Chunk]) -> list[Chunk]:
        if not chunks:
            return list(chunks)
        keys = [_key(file, chunk) for chunk in chunks]
        found = await asyncio.to_thread(self.cache.read, list(dict.fromkeys(keys)))
        missing = {k: c for k, c in zip(keys, chunks, strict=True) if k not in found}
        if missing:
            document = await asyncio.to_thread(document_text, self.root / file.path)
            lines = await asyncio.gather(
                *(self._write(document, chunk.text) for chunk in missing.values())
            )
            fresh = dict(zip(missing, lines, strict=True))
            await asyncio.to_thread(self.cache.write, fresh)
            found.update(fresh)
        return [_with_context(chunk, found[key]) for chunk, key in zip(chunks, keys, strict=True)]

    async def _write(self, document: str, chunk: str) -> str:
        async with self.limit:
            return await self.writer.write(document, chunk)


def document_text(path: Path) -> str:
    """The text of a document the way ingestion reads it (a PDF's extracted text)."""
    data = path.read_bytes()
    if data.startswith(b"%PDF"):
        return read_pdf(data, outline=False).text
    return decode(data)[0]


def _key(file: SourceFile, chunk: Chunk) -> bytes:
    return hashlib.sha256(f"{file.content_hash}\0{chunk.content_hash}".encode()).digest()


def _with_context(chunk: Chunk, context: str) -> Chunk:
    if not context:
        return chunk
    text = f"{context}\n\n{chunk.text}"
    return replace(chunk, text=text, content_hash=hashlib.sha256(text.encode()).hexdigest())
