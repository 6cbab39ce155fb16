"""The vectors of an embedded collection: one append-only file of float32 rows, mapped
into memory, and the map of which chunk owns each row. A replaced file's new rows go at
the end and its old rows are only marked dead (nothing is rewritten); when dead rows
outnumber live ones the file is compacted into a new generation."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import numpy.typing as npt

from holodeck.atomic_write import atomic_writer

Matrix = npt.NDArray[np.float32]


class VectorFile:
    """Rows of `dimensions` float32 values in `path`; `rows()` maps them (read-only)."""

    def __init__(self, path: Path, dimensions: int) -> None:
        self.path = path
        self.dimensions = dimensions
        self._map: Matrix | None = None
        self._mapped_rows = -1

    @property
    def row_bytes(self) -> int:
        return self.dimensions * 4

    def size(self) -> int:
        """Whole rows in the file (a torn write at the end is not a row)."""
        try:
            return self.path.stat().st_size // self.row_bytes
        except FileNotFoundError:
            return 0

    def rows(self) -> Matrix:
        """Every row written so far, memory-mapped (mapped again only when it grew)."""
        count = self.size()
        if count != self._mapped_rows:
            self._map = (
                np.memmap(self.path, dtype=np.float32, mode="r", shape=(count, self.dimensions))
                if count
                else np.empty((0, self.dimensions), dtype=np.float32)
            )
            self._mapped_rows = count
        assert self._map is not None
        return self._map

    def append(self, vectors: Matrix) -> int:
        """Write `vectors` at the end; the index of the first of them."""
        first = self.size()
        with self.path.open("ab") as out:
            out.truncate(first * self.row_bytes)  # drop a torn row left by a crash
            out.write(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
        return first

    def close(self) -> None:
        self._map = None
        self._mapped_rows = -1


def load_row_map(db: sqlite3.Connection, size: int) -> npt.NDArray[np.int64]:
    """Vector row -> chunk row (-1 for a dead row), read from the chunks table."""
    pairs = np.array(
        db.execute("SELECT vrow, row FROM chunks WHERE vrow IS NOT NULL").fetchall(),
        dtype=np.int64,
    ).reshape(-1, 2)
    size = max(size, int(pairs[:, 0].max()) + 1 if len(pairs) else 0)
    owner = np.full(size, -1, dtype=np.int64)
    owner[pairs[:, 0]] = pairs[:, 1]
    return owner


def save_row_map(
    db: sqlite3.Connection, home: Path, writes: int, owner: npt.NDArray[np.int64]
) -> None:
    """Keep the row map as `rows-<writes>.npy` for the next opening, so it reads no rows;
    not when the collection changed since the map was made (its write count moved)."""
    try:
        stored = db.execute("SELECT value FROM meta WHERE key = 'writes'").fetchone()
        if int(stored[0]) != writes:
            return  # stale: another opening wrote since (and may keep its own map)
        target = home / f"rows-{writes}.npy"
        if not target.exists():
            with atomic_writer(target) as out:  # two openings may save it at once
                np.save(out, owner)
        for old in home.glob("rows-*.npy"):
            if old != target:
                old.unlink(missing_ok=True)
    except (OSError, sqlite3.Error):
        pass  # only a cache: the next opening reads the rows from the database
