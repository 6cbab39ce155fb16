"""Embeddings kept on disk, so an unchanged text is never sent to a model twice.

One SQLite file; a row per (embedder name, sha256 of the text) holding the vector as
float32 bytes. WAL and a busy timeout let several processes (`holodeck deploy` workers, a
test run beside a chat) read and write it at once. A connection is opened per call, in a
worker thread, so nothing stays open between calls and nothing blocks the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from holodeck.errors import ExecutionError
from holodeck.search.embeddings._protocol import Embedder
from holodeck.search.embeddings._vectors import Vectors, empty

# A rowid table, not WITHOUT ROWID: a vector (1.5 KB at 384 dimensions, 6 KB at 1536)
# then sits in its table page instead of spilling into overflow pages of the key's
# B-tree, which tripled the file's size.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    id INTEGER PRIMARY KEY,
    embedder TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (embedder, text_sha256)
)
"""
_BUSY_MS = 30_000
T = TypeVar("T")
R = TypeVar("R")
_CHUNK = 500  # keys per SELECT: below SQLite's limit on bound parameters


class CachedEmbedder:
    """`inner` behind a cache file at `path`: only texts missing from it reach `inner`.

    embedder = CachedEmbedder(LocalEmbedder(), project / ".holodeck/cache/embeddings.db")
    """

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.path = path

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def size(self) -> int | None:
        return getattr(self.inner, "size", None)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit-length float32 row per text, in order; new texts are embedded once
        each (duplicates share one request slot) and stored."""
        if not texts:
            return empty(self.size)
        keys = [hashlib.sha256(t.encode("utf-8")).digest() for t in texts]
        found = await asyncio.to_thread(self._guarded, self._read, keys)
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found and key not in missing:
                missing[key] = text
        if missing:
            fresh = await self.inner.embed(list(missing.values()))
            new = dict(zip(missing, fresh, strict=True))
            await asyncio.to_thread(self._guarded, self._write, new)
            found.update(new)
        rows = [found[k] for k in keys]
        if len({len(r) for r in rows}) > 1:
            # the model behind this name changed size (an Ollama model replaced, say)
            raise ExecutionError(
                f"the embedding cache {self.path} holds vectors of another size for "
                f"{self.name} than the model gives now",
                hint=f"delete {self.path} to embed everything again",
            )
        return np.stack(rows).astype(np.float32, copy=False)

    def _guarded(self, work: Callable[[T], R], arg: T) -> R:
        """`work(arg)`, with a broken or unwritable cache file said plainly."""
        try:
            return work(arg)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise ExecutionError(
                f"the embedding cache {self.path} cannot be used: {exc}",
                hint=f"check that its folder is writable, or delete {self.path} "
                "(it only holds vectors that can be made again)",
            ) from None

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=_BUSY_MS / 1000, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")  # durable enough for a cache, with WAL
        db.execute(_SCHEMA)
        return db

    def _read(self, keys: list[bytes]) -> dict[bytes, Vectors]:
        out: dict[bytes, Vectors] = {}
        unique = list(dict.fromkeys(keys))
        db = self._connect()
        try:
            for start in range(0, len(unique), _CHUNK):
                part = unique[start : start + _CHUNK]
                marks = ",".join("?" * len(part))
                rows = db.execute(
                    "SELECT text_sha256, vector FROM embeddings "
                    f"WHERE embedder = ? AND text_sha256 IN ({marks})",
                    [self.name, *part],
                )
                for key, blob in rows:
                    out[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
        finally:
            db.close()
        return out

    def _write(self, vectors: dict[bytes, Vectors]) -> None:
        db = self._connect()
        try:
            with db:
                db.execute("BEGIN IMMEDIATE")
                db.executemany(
                    "INSERT OR REPLACE INTO embeddings (embedder, text_sha256, vector) "
                    "VALUES (?, ?, ?)",
                    [
                        (self.name, key, np.asarray(v, dtype=np.float32).tobytes())
                        for key, v in vectors.items()
                    ],
                )
        finally:
            db.close()
