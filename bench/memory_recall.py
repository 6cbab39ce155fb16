"""Long-term memory recall in the embedded store: one user holding N memories.

Run: .venv/bin/python bench/memory_recall.py [memories] [dimensions] [vocabulary]
(default 10000 384 26)

Each memory is six words drawn from a vocabulary: the 26 listed below by default, where
every word is in about a fifth of all memories, so each query's keyword ranking scores
about half of them (the worst case for FTS5's BM25, which scores every match); a larger
vocabulary (`2000`: the listed words and made-up ones) is closer to what people tell an
agent.

What is timed is `MemoryBank.recall` as the `recall` tool and auto recall call it: the
keyword ranking (FTS5), the vector ranking (the exact matrix product) and their fusion,
with the query's vector made by a local hashing embedder (no model: the store's work is
what is measured). The memories are written with `MemoryBank.remember_many` (the batched
path imports use: a thousand memories per transaction); "write" is that time.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from holodeck.memory import MemoryBank, MemoryOwner
from holodeck.search.stores import StoreLocation

QUERIES = 200
WORDS = [
    "tea",
    "coffee",
    "Lyon",
    "Paris",
    "Oslo",
    "bees",
    "chess",
    "golf",
    "nights",
    "rye",
    "bread",
    "office",
    "garden",
    "bike",
    "train",
    "sister",
    "brother",
    "meeting",
    "invoice",
    "order",
    "allergy",
    "nuts",
    "shellfish",
    "vegan",
    "piano",
    "violin",
]


class HashingEmbedder:
    """A deterministic embedder: each word adds its hashed direction (no model)."""

    name = "bench:hashing"

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions

        self._words: dict[str, npt.NDArray[np.float32]] = {}

    def _word(self, word: str) -> npt.NDArray[np.float32]:
        found = self._words.get(word)
        if found is None:
            seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
            found = np.random.default_rng(seed).standard_normal(self.dimensions)
            found = self._words[word] = found.astype(np.float32)
        return found

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for index, text in enumerate(texts):
            for word in text.lower().split():
                if not word.endswith(":"):  # "fact 12:" numbers every memory apart
                    rows[index] += self._word(word)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        out: npt.NDArray[np.float32] = np.divide(
            rows, norms, out=np.zeros_like(rows), where=norms > 0
        )
        return out


def vocabulary(size: int) -> list[str]:
    return (WORDS + [f"w{n}x" for n in range(max(0, size - len(WORDS)))])[:size]


def fact(rng: random.Random, n: int, words: list[str]) -> str:
    return f"fact {n}: the user " + " ".join(rng.choices(words, k=6))


async def main(count: int, dimensions: int, size: int) -> None:
    rng = random.Random(7)
    words = vocabulary(size)
    embedder = HashingEmbedder(dimensions)
    owner = MemoryOwner("bench-user")
    with tempfile.TemporaryDirectory() as home:
        location = StoreLocation("embedded", Path(home) / "memory")
        async with MemoryBank(
            agent="bench",
            location=location,
            embedder=embedder,
            scope="user",
            retention_days=None,
        ) as bank:
            started = time.perf_counter()
            await bank.remember_many(owner, [fact(rng, n, words) for n in range(count)])
            written = time.perf_counter() - started
            took: list[float] = []
            for _ in range(QUERIES):
                query = " ".join(rng.choices(words, k=3))
                started = time.perf_counter()
                found = await bank.recall(owner, query, 5)
                took.append((time.perf_counter() - started) * 1000)
                assert found
    took.sort()
    p50 = statistics.median(took)
    p99 = took[int(len(took) * 0.99) - 1]
    print(f"memories={count} dimensions={dimensions} vocabulary={size} write={written:.1f}s")
    print(f"recall top 5 over {QUERIES} queries: p50 {p50:.1f} ms, p99 {p99:.1f} ms")


if __name__ == "__main__":
    memories = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    width = int(sys.argv[2]) if len(sys.argv) > 2 else 384
    size = int(sys.argv[3]) if len(sys.argv) > 3 else len(WORDS)
    asyncio.run(main(memories, width, size))
