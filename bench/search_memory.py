"""Ingestion's memory against the size of a file: CSVs of 20 MB and 200 MB (about 160,000
and 1.6 million rows) ingested by a vectorstore tool with a field mapping into the
embedded store, each in a process of its own whose peak resident memory is measured.

Run: .venv/bin/python bench/search_memory.py [MB ...]   (default 20 200)

Prints, per file, its rows, the child's peak memory after start-up (imports) and after
the ingestion, and the time taken; then the ratio of the largest file's peak to the
smallest's: flat (about 1) when a file is read, embedded and stored a batch at a time
(`holodeck.search.ingest.BATCH` chunks), where the whole file was held before (a 200 MB,
1.6 M-row CSV took 3.15 GB). The embedding model is a stand-in that needs no network and
costs next to nothing (a text's vector comes from its hash, 64 dimensions), so the numbers
are ingestion's own: reading, chunking, embedding calls, storing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

DIMENSIONS = 64
AGENT = """\
name: memory
model:
  provider: test
instructions:
  inline: Answer from the catalogue.
tools:
  - type: vectorstore
    name: catalogue
    description: The product catalogue.
    source: catalogue.csv
    vector_field: description
    meta_fields: [sku, name, price]
    id_field: sku
"""
WORDS = [
    "sturdy",
    "light",
    "compact",
    "quiet",
    "steel",
    "oak",
    "glass",
    "cotton",
    "blue",
    "green",
    "red",
    "black",
]


def write_csv(path: Path, megabytes: int) -> int:
    """A catalogue of `megabytes` MB (rows of about 125 bytes); returns its rows."""
    rows = 0
    with path.open("w", encoding="utf-8") as out:
        written = out.write("sku,name,price,description\n")
        while written < megabytes * 1_000_000:
            a, b, c = WORDS[rows % 12], WORDS[(rows // 12) % 12], WORDS[(rows // 144) % 12]
            written += out.write(
                f"p-{rows:07d},Item {rows},{rows % 997}.99,A {a} {b} thing for task {rows} "
                f"in the {c} workshop; it ships in {rows % 9 + 1} days from the {b} store\n"
            )
            rows += 1
    return rows


class HashModel:
    """An embedding model with no network: a text's vector is drawn from its hash."""

    name = "bench:hash"
    size = DIMENSIONS

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        digests = b"".join(hashlib.shake_128(t.encode()).digest(DIMENSIONS) for t in texts)
        vectors = np.frombuffer(digests, dtype=np.int8).reshape(len(texts), DIMENSIONS)
        vectors = vectors.astype(np.float32) + 0.5  # never all zero
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


async def ingest(root: Path) -> dict[str, float]:
    """The child's work: the tool's index over `root`, brought up to date once."""
    from holodeck.config.loader import load_agent
    from holodeck.search.index import SearchIndex
    from holodeck.search.stores import StoreLocation
    from holodeck.search.tool_index import collection_name, ingest_options, search_settings
    from holodeck.spec.models.tools import VectorstoreTool

    spec = load_agent(root)
    [tool] = [t for t in spec.tools if isinstance(t, VectorstoreTool)]
    embedder = HashModel()
    options = ingest_options(tool, spec.root)
    index = SearchIndex(
        tool.name,
        options,
        StoreLocation("embedded", root / ".holodeck" / "vectors"),
        collection_name(tool, options),
        embedder,
        search_settings(tool),
        dimensions=DIMENSIONS,
    )
    started_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    async with index:
        report = await index.sync()
    return {
        "startup_kib": started_kib,
        "seconds": time.perf_counter() - started,
        "chunks": report.chunks,
        "issues": len(report.issues),
    }


def measure(root: Path) -> dict[str, float]:
    """Ingest in a child process; its peak memory comes from the kernel (wait4)."""
    child = subprocess.Popen(
        [sys.executable, __file__, "--child", str(root)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    said = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"the ingestion of {root} failed ({child.returncode})")
    result: dict[str, float] = json.loads(said)
    result["peak_kib"] = usage.ru_maxrss
    return result


def main(sizes: list[int]) -> None:
    peaks: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="holodeck-rag-memory-") as tmp:
        for megabytes in sizes:
            root = Path(tmp) / f"agent-{megabytes}"
            root.mkdir()
            (root / "agent.yaml").write_text(AGENT, encoding="utf-8")
            rows = write_csv(root / "catalogue.csv", megabytes)
            size = (root / "catalogue.csv").stat().st_size / 1e6
            result = measure(root)
            peaks[megabytes] = result["peak_kib"]
            print(
                f"{size:6.0f} MB, {rows:>9,} rows: peak {result['peak_kib'] / 1024:6.0f} MiB "
                f"(after start-up {result['startup_kib'] / 1024:.0f} MiB); "
                f"{result['chunks']:,.0f} chunks in {result['seconds']:.0f} s "
                f"({rows / result['seconds']:,.0f} rows/s), {result['issues']:.0f} issues",
                flush=True,
            )
    if len(peaks) > 1:
        small, large = min(peaks), max(peaks)
        print(
            f"peak at {large} MB / peak at {small} MB: {peaks[large] / peaks[small]:.2f} "
            f"(the file is {large / small:.0f}x larger)"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(asyncio.run(ingest(Path(sys.argv[2])))))
    else:
        main([int(a) for a in sys.argv[1:]] or [20, 200])
