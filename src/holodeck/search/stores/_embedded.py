"""The default store: a collection is a directory on disk, no server. SQLite keeps the
chunks, the file manifest and an FTS5 index (BM25); the vectors live in an append-only
float32 file searched exactly by one matrix product (see `bench/vector_store.py`).

Several processes may share a directory: writers take SQLite's write lock before they
append vectors, and readers notice other processes' commits (`PRAGMA data_version`).
SQLite and numpy work runs in a worker thread, so the event loop never waits on disk."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from holodeck.errors import ExecutionError
from holodeck.search._types import Chunk, Scored, SourceFile
from holodeck.search.stores._codec import chunk_from_json, chunk_to_json
from holodeck.search.stores._fts import fts_search
from holodeck.search.stores._naming import safe_name
from holodeck.search.stores._protocol import PENDING
from holodeck.search.stores._ranking import top_rows
from holodeck.search.stores._remote import check_dimensions, check_rows
from holodeck.search.stores._vector_file import Matrix, VectorFile, load_row_map, save_row_map

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    row INTEGER PRIMARY KEY, source TEXT NOT NULL, record_id TEXT, position INTEGER NOT NULL,
    vrow INTEGER, data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_record ON chunks (source, record_id, position);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(text, tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS fts_terms USING fts5vocab(fts, 'row');
"""
_COMPACT_AT = 4096  # dead rows tolerated before compaction is considered
_TIE_SLACK = 1e-5  # float32 products of equal rows may differ in the last bits


def _normalised(vectors: Matrix) -> Matrix:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    out: Matrix = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    return out


class EmbeddedStore:
    """The collection `collection` under `directory` (created when missing)."""

    def __init__(self, directory: Path, collection: str, dimensions: int | None) -> None:
        self.collection = collection
        self.home = directory / safe_name(collection, allowed=r"A-Za-z0-9_.\-", max_len=80)
        self.dimensions = dimensions
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._vectors: VectorFile | None = None
        self._owner = np.empty(0, dtype=np.int64)  # vector row -> chunk row, -1 when dead
        self._seen_version = -1
        self._writes = -1  # the collection's write count `_owner` reflects

    # -- opening

    async def __aenter__(self) -> Self:
        await asyncio.to_thread(self._open)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._lock:
            self._save_rows()
            if self._db is not None:
                self._db.close()
                self._db = None
            if self._vectors is not None:
                self._vectors.close()

    def _open(self) -> None:
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.home / "chunks.sqlite3", check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA busy_timeout=30000")
            db.executescript(_SCHEMA)
            with db:
                db.execute("BEGIN IMMEDIATE")
                stored = dict(db.execute("SELECT key, value FROM meta").fetchall())
                if not stored:
                    wanted = "none" if self.dimensions is None else str(self.dimensions)
                    stored = {"dimensions": wanted, "generation": "0"}
                    db.executemany("INSERT INTO meta VALUES (?, ?)", list(stored.items()))
                db.execute("INSERT OR IGNORE INTO meta VALUES ('writes', '0')")
        except (OSError, sqlite3.Error) as error:
            raise ExecutionError(
                f"embedded vector store {self.home}: {error}",
                hint="check that the directory is writable and not on a full disk",
            ) from None
        self._db = db
        width = stored.get("dimensions", "none")
        check_dimensions(
            "embedded", self.collection, None if width == "none" else int(width), self.dimensions
        )
        self._refresh(force=True)

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise ExecutionError(f"embedded vector store {self.home} is not open")
        return self._db

    def _refresh(self, force: bool = False) -> None:
        """Load which vector row belongs to which chunk, when another process committed."""
        db = self._conn()
        version = int(db.execute("PRAGMA data_version").fetchone()[0])
        if not force and version == self._seen_version:
            return
        self._seen_version = version
        if self.dimensions is None:
            return
        snapshot = not db.in_transaction  # the meta and the rows read at one moment
        if snapshot:
            db.execute("BEGIN")
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            path = self.home / f"vectors-{meta['generation']}.f32"
            if self._vectors is None or self._vectors.path != path:
                self._vectors = VectorFile(path, self.dimensions)
            writes = int(meta["writes"])
            cached = self.home / f"rows-{writes}.npy"
            if writes != self._writes and cached.exists():
                self._owner = np.load(cached)  # saved at a close: no query of every row
            elif writes != self._writes:
                self._owner = load_row_map(db, self._vectors.size())
            self._writes = writes
        finally:
            if snapshot:
                db.execute("COMMIT")

    def _save_rows(self) -> None:
        if self._db is not None and self.dimensions is not None and self._writes >= 0:
            save_row_map(self._db, self.home, self._writes, self._owner)

    # -- writing

    def _read(self, statement: str, params: tuple[str, ...] = ()) -> list[Any]:
        with self._lock:
            return self._conn().execute(statement, params).fetchall()

    async def files(self) -> dict[str, str]:
        rows = await asyncio.to_thread(self._read, "SELECT path, hash FROM files")
        return dict(rows)

    async def replace_file(
        self,
        file: SourceFile,
        chunks: Sequence[Chunk],
        vectors: Matrix | None,
        *,
        start: int = 0,
        complete: bool = True,
    ) -> None:
        check_rows(vectors, len(chunks), self.dimensions)
        await asyncio.to_thread(self._replace, file, chunks, vectors, start, complete)

    def _replace(
        self,
        file: SourceFile,
        chunks: Sequence[Chunk],
        vectors: Matrix | None,
        start: int,
        complete: bool,
    ) -> None:
        with self._lock:
            db = self._conn()
            with db:
                db.execute("BEGIN IMMEDIATE")  # the write lock, before the vectors grow
                self._refresh()
                if start == 0:
                    self._drop(db, file.path)
                first = None
                if vectors is not None and self._vectors is not None and len(chunks):
                    first = self._vectors.append(_normalised(vectors.astype(np.float32)))
                added = []
                for index, chunk in enumerate(chunks):
                    vrow = None if first is None else first + index
                    cursor = db.execute(
                        "INSERT INTO chunks (source, record_id, position, vrow, data) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (chunk.source, chunk.record_id, chunk.position, vrow, chunk_to_json(chunk)),
                    )
                    db.execute(
                        "INSERT INTO fts (rowid, text) VALUES (?, ?)",
                        (cursor.lastrowid, chunk.text),
                    )
                    added.append((vrow, cursor.lastrowid))
                db.execute(
                    "INSERT OR REPLACE INTO files VALUES (?, ?)",
                    (file.path, file.content_hash if complete else PENDING),
                )
                self._note_added(added)
                self._compact_if_sparse(db)
            self._seen_version = int(db.execute("PRAGMA data_version").fetchone()[0])

    async def add_files(
        self, files: Sequence[tuple[SourceFile, Chunk]], vectors: Matrix | None
    ) -> None:
        """Store many one-chunk files (vectors: one row each, in order) in one transaction;
        a path already stored is replaced. What `replace_file` does for each, at a
        fraction of the cost: one commit, one append to the vector file, statements run
        in bulk (long-term memory's imports write a memory per file)."""
        check_rows(vectors, len(files), self.dimensions)
        await asyncio.to_thread(self._add_many, files, vectors)

    def _add_many(self, files: Sequence[tuple[SourceFile, Chunk]], vectors: Matrix | None) -> None:
        if not files:
            return
        paths = [file.path for file, _ in files]
        with self._lock:
            db = self._conn()
            with db:
                db.execute("BEGIN IMMEDIATE")  # the write lock, before the vectors grow
                self._refresh()
                for start in range(0, len(paths), 500):
                    part = paths[start : start + 500]
                    marks = ",".join("?" * len(part))
                    query = f"SELECT path FROM files WHERE path IN ({marks})"
                    for (stored,) in db.execute(query, part).fetchall():
                        self._drop(db, stored)
                first = None
                if vectors is not None and self._vectors is not None:
                    first = self._vectors.append(_normalised(vectors.astype(np.float32)))
                (top,) = db.execute("SELECT coalesce(max(row), 0) FROM chunks").fetchone()
                rows = range(int(top) + 1, int(top) + 1 + len(files))
                vrows = [None if first is None else first + i for i in range(len(files))]
                db.executemany(
                    "INSERT INTO chunks (row, source, record_id, position, vrow, data) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (row, c.source, c.record_id, c.position, vrow, chunk_to_json(c))
                        for row, vrow, (_, c) in zip(rows, vrows, files, strict=True)
                    ],
                )
                db.executemany(
                    "INSERT INTO fts (rowid, text) VALUES (?, ?)",
                    [(row, c.text) for row, (_, c) in zip(rows, files, strict=True)],
                )
                db.executemany(
                    "INSERT OR REPLACE INTO files VALUES (?, ?)",
                    [(f.path, f.content_hash) for f, _ in files],
                )
                self._note_added(list(zip(vrows, rows, strict=True)))
                # other openings reload their row map when the write count moves
                db.execute(
                    "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'writes'"
                )
                self._writes = int(
                    db.execute("SELECT value FROM meta WHERE key = 'writes'").fetchone()[0]
                )
                self._compact_if_sparse(db)
            self._seen_version = int(db.execute("PRAGMA data_version").fetchone()[0])

    def _drop(self, db: sqlite3.Connection, path: str) -> None:
        gone = db.execute("SELECT row, vrow FROM chunks WHERE source = ?", (path,)).fetchall()
        db.execute("DELETE FROM chunks WHERE source = ?", (path,))
        db.executemany("DELETE FROM fts WHERE rowid = ?", [(row,) for row, _ in gone])
        db.execute("DELETE FROM files WHERE path = ?", (path,))
        db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'writes'")
        self._writes = int(db.execute("SELECT value FROM meta WHERE key = 'writes'").fetchone()[0])
        dead = [vrow for _, vrow in gone if vrow is not None and vrow < len(self._owner)]
        self._owner[dead] = -1

    def _note_added(self, added: list[tuple[int | None, int | None]]) -> None:
        rows = [(vrow, row) for vrow, row in added if vrow is not None and row is not None]
        if not rows:
            return
        top = max(vrow for vrow, _ in rows) + 1
        if top > len(self._owner):
            grown = np.full(top, -1, dtype=np.int64)
            grown[: len(self._owner)] = self._owner
            self._owner = grown
        pairs = np.array(rows, dtype=np.int64)
        self._owner[pairs[:, 0]] = pairs[:, 1]

    def _compact_if_sparse(self, db: sqlite3.Connection) -> None:
        """Write the live rows to a new generation once dead rows outnumber them."""
        if self._vectors is None:
            return
        live = self._owner >= 0
        dead = len(self._owner) - int(live.sum())
        if dead < _COMPACT_AT or dead < len(self._owner) // 2:
            return
        generation = int(
            db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
        )
        fresh = VectorFile(self.home / f"vectors-{generation + 1}.f32", self._vectors.dimensions)
        fresh.path.unlink(missing_ok=True)  # left by a compaction that did not commit
        kept = np.flatnonzero(live)
        fresh.append(np.asarray(self._vectors.rows()[kept]))
        db.executemany(
            "UPDATE chunks SET vrow = ? WHERE row = ?",
            [(new, int(self._owner[old])) for new, old in enumerate(kept)],
        )
        db.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (str(generation + 1),))
        self._owner = self._owner[kept]
        old, self._vectors = self._vectors, fresh
        old.close()
        old.path.unlink(missing_ok=True)  # a reader that has it mapped keeps its pages

    async def delete_file(self, path: str) -> None:
        def delete() -> None:
            with self._lock:
                db = self._conn()
                with db:
                    db.execute("BEGIN IMMEDIATE")
                    self._refresh()
                    self._drop(db, path)
                self._seen_version = int(db.execute("PRAGMA data_version").fetchone()[0])

        await asyncio.to_thread(delete)

    # -- reading

    async def nearest(self, vector: npt.NDArray[np.float32], k: int) -> list[Scored]:
        if self.dimensions is None or k <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dimensions:
            raise ExecutionError(
                f"a query vector of width {query.shape[0]} for collection "
                f"{self.collection!r} of width {self.dimensions}"
            )
        return await asyncio.to_thread(self._nearest, _normalised(query[None, :])[0], k)

    def _nearest(self, query: Matrix, k: int) -> list[Scored]:
        with self._lock:
            self._refresh()
            assert self._vectors is not None
            owner = self._owner
            matrix = self._vectors.rows()[: len(owner)]
            scores = matrix @ query
            scores[owner[: len(scores)] < 0] = -np.inf
            live = int(np.count_nonzero(scores > -np.inf))
            if live == 0:
                return []
            # near-ties of the k-th: rescored exactly (float64), then ranked with ties kept
            rough = top_rows(scores, min(k, live))
            floor = scores[rough[-1]] - _TIE_SLACK
            candidates = np.flatnonzero(scores >= floor)
            exact = np.asarray(matrix[candidates], dtype=np.float64) @ query.astype(np.float64)
            chosen = candidates[top_rows(exact, min(k, live))]
            by_row = dict(zip(candidates.tolist(), exact.tolist(), strict=True))
            chunks = self._chunks_by_row([int(owner[row]) for row in chosen])
            return [Scored(chunks[int(owner[row])], by_row[int(row)]) for row in chosen]

    def _chunks_by_row(self, rows: list[int]) -> dict[int, Chunk]:
        found: dict[int, Chunk] = {}
        db = self._conn()
        for start in range(0, len(rows), 500):
            part = rows[start : start + 500]
            marks = ",".join("?" * len(part))
            query = f"SELECT row, data FROM chunks WHERE row IN ({marks})"
            found.update((row, chunk_from_json(data)) for row, data in db.execute(query, part))
        return found

    async def keyword(self, query: str, k: int) -> list[Scored]:
        def search() -> list[tuple[str, float]]:
            with self._lock:
                return fts_search(self._conn(), query, k)

        found = await asyncio.to_thread(search)
        return [Scored(chunk_from_json(data), score) for data, score in found]

    async def record_chunks(self, source: str, record_id: str) -> list[Chunk]:
        rows = await asyncio.to_thread(
            self._read,
            "SELECT data FROM chunks WHERE source = ? AND record_id = ? ORDER BY position",
            (source, record_id),
        )
        return [chunk_from_json(data) for (data,) in rows]

    async def count(self) -> int:
        [(found,)] = await asyncio.to_thread(self._read, "SELECT count(*) FROM chunks")
        return int(found)
