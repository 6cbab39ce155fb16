"""What embedding costs here: the offline model's start and throughput, and the disk
cache's reads and writes.

Run: .venv/bin/python bench/embeddings.py [texts] [--cache-only]
Measured on 2 shared cores (load ~4): 20,000 vectors of 384 written in 1.1 s and read
back in 0.5 s (~39k/s, 42 MB); the offline model imports and loads in ~12 s and embeds a
370-character chunk in ~70 ms (torch competing with other work for both cores).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from holodeck.search.embeddings import LOCAL_SIZE, CachedEmbedder, LocalEmbedder

SENTENCE = "Retrieval finds the passages of a document that answer a question best. "


def chunks(count: int) -> list[str]:
    return [f"{i}: " + SENTENCE * 5 for i in range(count)]  # ~370 characters each


class Fixed:
    """A stand-in model that costs nothing, so the cache's own time shows."""

    name = "bench:fixed"
    size = LOCAL_SIZE

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.full((len(texts), LOCAL_SIZE), LOCAL_SIZE**-0.5, dtype=np.float32)


async def main(count: int) -> None:
    texts = chunks(count)
    cache = Path(tempfile.mkdtemp()) / "embeddings.sqlite3"
    cached = CachedEmbedder(Fixed(), cache)
    started = time.perf_counter()
    await cached.embed(texts)
    wrote = time.perf_counter() - started
    started = time.perf_counter()
    await cached.embed(texts)
    read = time.perf_counter() - started
    print(
        f"cache: {count} vectors of {LOCAL_SIZE} written in {wrote:.2f} s, read in {read:.3f} s"
        f" ({count / read:,.0f}/s), file {cache.stat().st_size / 1e6:.1f} MB"
    )

    if "--cache-only" in sys.argv:
        return
    local = LocalEmbedder()
    started = time.perf_counter()
    await local.embed(["warm up"])
    print(f"offline model: import and load {time.perf_counter() - started:.1f} s")
    sample = texts[: min(count, 512)]
    started = time.perf_counter()
    await local.embed(sample)
    took = time.perf_counter() - started
    print(
        f"offline model: {len(sample)} chunks in {took:.2f} s "
        f"({took / len(sample) * 1000:.1f} ms per chunk)"
    )


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if a.isdigit()]
    asyncio.run(main(numbers[0] if numbers else 20_000))
