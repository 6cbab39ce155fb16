"""The embedded vector store at scale: which design keeps chunks and vectors on disk.

Run: .venv/bin/python bench/vector_store.py [chunks] [dimensions]   (default 100000 384)
Targets at 100,000 chunks of 384 dimensions: search p50 < 20 ms with the query vector
given, recall@10 >= 0.95 against exact search, a fast open, and replacing one file among
many without rewriting the others.

Designs compared, both with SQLite for chunks, the manifest and FTS5:
- `file`: vectors in an append-only float32 file, memory-mapped; a replaced file's rows
  are appended and its old rows marked dead (the store `open_store` gives);
- `blobs`: vectors as BLOBs in the SQLite chunks table, read into one matrix at open.

Both search by the same exact matrix product (recall 1.0), so their search times match:
the product over 150 MB of vectors is the floor, set by memory bandwidth and by how busy
the machine is. They differ in opening (the file is mapped and its row map kept beside
it: milliseconds; the blobs are read whole: about a second at 100k) and in memory (the
file's pages are shared by every process that maps it, and dropped under pressure).
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from holodeck.search._types import Chunk, SourceFile
from holodeck.search.stores import StoreLocation, open_store

PER_FILE = 100  # chunks per source file
QUERIES = 60
K = 10
Matrix = npt.NDArray[np.float32]


def data(count: int, dims: int) -> tuple[Matrix, Matrix, list[str]]:
    """Unit vectors around 1,000 topics (as embeddings of real text cluster), queries
    near stored chunks, and texts drawn from a Zipf vocabulary."""
    rng = np.random.default_rng(7)
    topics = rng.standard_normal((1000, dims)).astype(np.float32)
    rows = topics[rng.integers(0, 1000, count)] + 0.6 * rng.standard_normal((count, dims))
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    picks = rows[rng.integers(0, count, QUERIES)] + 0.3 * rng.standard_normal((QUERIES, dims))
    queries = (picks / np.linalg.norm(picks, axis=1, keepdims=True)).astype(np.float32)
    vocabulary = [f"w{i}" for i in range(20000)]
    draws = np.minimum(rng.zipf(1.3, (count, 30)), len(vocabulary)) - 1
    texts = [" ".join(vocabulary[j] for j in line) for line in draws]
    return rows, queries, texts


def chunks_of(path: str, first: int, texts: list[str]) -> list[Chunk]:
    return [
        Chunk(f"{path}#{i}", text, path, i, f"h{first + i}", metadata={"n": first + i})
        for i, text in enumerate(texts)
    ]


def timed(samples: int, work: Callable[[int], object]) -> list[float]:
    spent = []
    for index in range(samples):
        start = time.perf_counter()
        work(index)
        spent.append((time.perf_counter() - start) * 1000)
    return spent


def size(database: Path) -> int:
    """Bytes of a SQLite database and its write-ahead log."""
    wal = database.with_name(database.name + "-wal")
    return database.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def recall(found: list[list[int]], exact: list[list[int]]) -> float:
    return statistics.mean(
        len(set(f[:K]) & set(e[:K])) / K for f, e in zip(found, exact, strict=True)
    )


async def bench_file(
    root: Path, rows: Matrix, queries: Matrix, texts: list[str]
) -> dict[str, float]:
    location = StoreLocation("embedded", root)
    count = len(rows)
    start = time.perf_counter()
    async with open_store(location, "bench", rows.shape[1]) as store:
        for first in range(0, count, PER_FILE):
            path = f"docs/{first // PER_FILE}.md"
            part = slice(first, first + PER_FILE)
            await store.replace_file(
                SourceFile(path, "v1"), chunks_of(path, first, texts[part]), rows[part]
            )
    built = time.perf_counter() - start
    result: dict[str, float] = {"build_s": built}

    start = time.perf_counter()
    async with open_store(location, "bench", rows.shape[1]) as store:
        result["open_ms"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        await store.nearest(queries[0], K)
        result["first_search_ms"] = (time.perf_counter() - start) * 1000
        found: list[list[int]] = []
        spent = []
        for query in queries:
            start = time.perf_counter()
            hits = await store.nearest(query, K)
            spent.append((time.perf_counter() - start) * 1000)
            found.append([int(hit.chunk.metadata["n"]) for hit in hits])  # type: ignore[arg-type]
        exact = [list(np.argsort(-(rows @ q), kind="stable")[:K]) for q in queries]
        result |= {"search_p50_ms": p(spent, 50), "search_p95_ms": p(spent, 95)}
        result["recall_at_10"] = recall(found, exact)
        # a rare word (in ~0.1% of chunks) beside a middling one; then two common words
        for kind, query in (("rare", "w900 w40"), ("common", "w3 w8")):
            spent = []
            for _ in range(10):
                start = time.perf_counter()
                await store.keyword(query, K)
                spent.append((time.perf_counter() - start) * 1000)
            result[f"keyword_{kind}_p50_ms"] = p(spent, 50)

        vectors = next(root.rglob("vectors-*.f32"))
        database = next(root.rglob("chunks.sqlite3"))
        before = vectors.stat().st_size, database.stat().st_size
        path = "docs/7.md"
        spent = []
        for version in range(5):
            start = time.perf_counter()
            await store.replace_file(
                SourceFile(path, f"v{version + 2}"),
                chunks_of(path, 700, texts[700:800]),
                rows[700:800],
            )
            spent.append((time.perf_counter() - start) * 1000)
        result["replace_file_ms"] = p(spent, 50)
        result["replace_vector_bytes_per_call"] = (vectors.stat().st_size - before[0]) / 5
        result["vector_file_mb"] = vectors.stat().st_size / 1e6
        result["database_mb"] = database.stat().st_size / 1e6
    return result


def bench_blobs(root: Path, rows: Matrix, queries: Matrix) -> dict[str, float]:
    """The other design, reduced to what differs: vectors as SQLite BLOBs, read at open."""
    db_path = root / "blobs.sqlite3"
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE chunks (row INTEGER PRIMARY KEY, source TEXT, vector BLOB)")
    db.execute("CREATE INDEX chunks_source ON chunks (source)")
    start = time.perf_counter()
    with db:
        db.executemany(
            "INSERT INTO chunks VALUES (?, ?, ?)",
            ((i, f"docs/{i // PER_FILE}.md", rows[i].tobytes()) for i in range(len(rows))),
        )
    result = {"build_s": time.perf_counter() - start}
    db.close()

    def load() -> tuple[sqlite3.Connection, npt.NDArray[np.int64], Matrix]:
        conn = sqlite3.connect(db_path)
        found = conn.execute("SELECT row, vector FROM chunks ORDER BY row").fetchall()
        ids = np.fromiter((row for row, _ in found), dtype=np.int64, count=len(found))
        matrix = np.frombuffer(b"".join(v for _, v in found), dtype=np.float32)
        return conn, ids, matrix.reshape(len(found), -1)

    start = time.perf_counter()
    conn, _ids, matrix = load()
    result["open_ms"] = (time.perf_counter() - start) * 1000
    spent = timed(len(queries), lambda i: np.argpartition(-(matrix @ queries[i]), K)[:K])
    result |= {"search_p50_ms": p(spent, 50), "search_p95_ms": p(spent, 95)}
    before = size(db_path)
    start = time.perf_counter()
    with conn:
        conn.execute("DELETE FROM chunks WHERE source = 'docs/7.md'")
        conn.executemany(
            "INSERT INTO chunks (source, vector) VALUES (?, ?)",
            (("docs/7.md", rows[i].tobytes()) for i in range(700, 800)),
        )
    result["replace_file_ms"] = (time.perf_counter() - start) * 1000
    after = size(db_path)
    result["replace_bytes_written"] = after - before
    conn.close()
    return result


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    dims = int(sys.argv[2]) if len(sys.argv) > 2 else 384
    rows, queries, texts = data(count, dims)
    print(f"{count} chunks of {dims} dimensions, {PER_FILE} chunks per file, k={K}")
    with tempfile.TemporaryDirectory() as home:
        root = Path(home)
        for name, result in (
            ("file (chosen)", asyncio.run(bench_file(root / "file", rows, queries, texts))),
            ("blobs", bench_blobs(root, rows, queries)),
        ):
            print(f"\n{name}")
            for key, value in result.items():
                print(f"  {key:32} {value:12.3f}")


if __name__ == "__main__":
    main()
