"""Embeddings kept on disk, so an unchanged text is never sent to a model twice.

One SQLite file; a row per (producer, sha256 of the text) holding the vector as float32
bytes. The producer is the model and where it runs (`producer_of`): one model name served
at two endpoints may give vectors of two widths, and neither may read the other's. The
width each producer gave last is kept too: when a model changes width under its name (an
Ollama model pulled again), its old vectors are dropped and the texts embedded again.
WAL and a busy timeout let several processes (`holodeck deploy` workers, a test run
beside a chat) read and write it at once. A connection is opened per call, in a worker
thread, so nothing stays open between calls and nothing blocks the event loop.
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
from holodeck.search.embeddings._protocol import Embedder, producer_of
from holodeck.search.embeddings._vectors import Vectors, empty

# A rowid table, not WITHOUT ROWID: a vector (1.5 KB at 384 dimensions, 6 KB at 1536)
# then sits in its table page instead of spilling into overflow pages of the key's
# B-tree, which tripled the file's size.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    id INTEGER PRIMARY KEY,
    producer TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (producer, text_sha256)
);
CREATE TABLE IF NOT EXISTS widths (producer TEXT PRIMARY KEY, width INTEGER NOT NULL);
"""
# Keyed by the model's name alone: rows another endpoint may have made. Dropped unread.
_OLD_TABLE = "embeddings"
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
    def producer(self) -> str:
        return producer_of(self.inner)

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
            width = int(fresh.shape[1])
            new = dict(zip(missing, fresh, strict=True))
            stale = [key for key, row in found.items() if len(row) != width]
            if stale:
                # the model changed width under this producer since these were cached
                text_of = dict(zip(keys, texts, strict=True))
                again = await self.inner.embed([text_of[key] for key in stale])
                new.update(zip(stale, again, strict=True))
            await asyncio.to_thread(self._guarded, self._write, (new, width))
            found.update(new)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    async def forget(self) -> int:
        """Drop every vector this producer made (`holodeck ingest --rebuild`); how many."""
        return await asyncio.to_thread(self._guarded, self._forget, None)

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
        db.executescript(_SCHEMA)
        old = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        if db.execute(old, (_OLD_TABLE,)).fetchone() is not None:
            db.execute(f"DROP TABLE IF EXISTS {_OLD_TABLE}")
        return db

    def _read(self, keys: list[bytes]) -> dict[bytes, Vectors]:
        out: dict[bytes, Vectors] = {}
        unique = list(dict.fromkeys(keys))
        db = self._connect()
        try:
            for start in range(0, len(unique), _CHUNK):
                part = unique[start : start + _CHUNK]
                marks = ",".join("?" * len(part))
                # rows of the width the producer gave last; others are stale
                rows = db.execute(
                    "SELECT text_sha256, vector FROM vectors "
                    f"WHERE producer = ? AND text_sha256 IN ({marks}) AND length(vector) = "
                    "4 * (SELECT width FROM widths WHERE producer = ?)",
                    [self.producer, *part, self.producer],
                )
                for key, blob in rows:
                    out[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
        finally:
            db.close()
        return out

    def _write(self, work: tuple[dict[bytes, Vectors], int]) -> None:
        vectors, width = work
        db = self._connect()
        try:
            with db:
                db.execute("BEGIN IMMEDIATE")
                stored = db.execute(
                    "SELECT width FROM widths WHERE producer = ?", (self.producer,)
                ).fetchone()
                if stored is not None and stored[0] != width:
                    db.execute("DELETE FROM vectors WHERE producer = ?", (self.producer,))
                db.execute(
                    "INSERT OR REPLACE INTO widths (producer, width) VALUES (?, ?)",
                    (self.producer, width),
                )
                db.executemany(
                    "INSERT OR REPLACE INTO vectors (producer, text_sha256, vector) "
                    "VALUES (?, ?, ?)",
                    [
                        (self.producer, key, np.asarray(v, dtype=np.float32).tobytes())
                        for key, v in vectors.items()
                    ],
                )
        finally:
            db.close()

    def _forget(self, _: None) -> int:
        db = self._connect()
        try:
            with db:
                db.execute("BEGIN IMMEDIATE")
                gone = db.execute("DELETE FROM vectors WHERE producer = ?", (self.producer,))
                db.execute("DELETE FROM widths WHERE producer = ?", (self.producer,))
                return gone.rowcount
        finally:
            db.close()
