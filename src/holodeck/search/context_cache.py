"""Chunk contexts kept on disk, so re-ingesting never asks the context model twice.

One SQLite file beside the embedding cache; a row per (writer, key) where the key is the
sha256 of the document's and the chunk's hashes: a context depends on both. Opened per
call in a worker thread, with WAL and a busy timeout, like the embedding cache."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from holodeck.errors import ExecutionError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS contexts (
    writer TEXT NOT NULL,
    key BLOB NOT NULL,
    context TEXT NOT NULL,
    PRIMARY KEY (writer, key)
)
"""
_BUSY_S = 30.0
_CHUNK = 500  # keys per SELECT: below SQLite's limit on bound parameters


class ContextCache:
    """`read` and `write` contexts by key for one writer (model) name."""

    def __init__(self, path: Path, writer: str) -> None:
        self.path = path
        self.writer = writer

    def read(self, keys: list[bytes]) -> dict[bytes, str]:
        out: dict[bytes, str] = {}
        with self._open() as db:
            for start in range(0, len(keys), _CHUNK):
                part = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(part))
                rows = db.execute(
                    f"SELECT key, context FROM contexts WHERE writer = ? AND key IN ({marks})",
                    [self.writer, *part],
                )
                out.update((bytes(key), text) for key, text in rows)
        return out

    def write(self, contexts: dict[bytes, str]) -> None:
        with self._open() as db:
            db.executemany(
                "INSERT OR REPLACE INTO contexts (writer, key, context) VALUES (?, ?, ?)",
                [(self.writer, key, text) for key, text in contexts.items()],
            )

    def _open(self) -> _Connection:
        return _Connection(self.path)


class _Connection:
    """A connection for one `with` block, committed on success; a broken or unwritable
    file is said plainly."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=_BUSY_S)
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute(_SCHEMA)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise _unusable(self.path, exc) from None
        return self.db

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        assert self.db is not None
        try:
            if kind is None:
                self.db.commit()
        finally:
            self.db.close()
        if isinstance(exc, sqlite3.DatabaseError | OSError):
            raise _unusable(self.path, exc) from None


def _unusable(path: Path, exc: BaseException) -> ExecutionError:
    return ExecutionError(
        f"the chunk context cache {path} cannot be used: {exc}",
        hint=f"check that its folder is writable, or delete {path} (it only holds "
        "contexts that can be written again)",
    )
