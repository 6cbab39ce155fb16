"""Search tools at scale: ingest 20,000 CSV rows and 200 pages of markdown with the local
embedder, re-run unchanged, change one page, then search 100,000 chunks.

Run: .venv/bin/python bench/search_ingest.py [rows] [pages]   (default 20000 200)

Prints rows/s and pages/s of the first ingestion (read, chunk, embed, store), the
unchanged re-run as a fraction of the first (target < 5%), the re-run after one page
changed, and the embedded store's search latency p50/p95 at 100,000 chunks with the
query vector given (target p50 < 20 ms) and recall@10 against exact search (target
>= 0.95). The 100,000 chunks are the ingested chunks' real vectors plus perturbed copies
of them, so they cluster as real embeddings do. Needs `holodeck-agents[local-embeddings]`.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import tool_context
from holodeck.search.index import SearchIndex, SyncReport
from holodeck.search.ingest import ingest as read_all
from holodeck.search.tool_index import search_index
from holodeck.spec.models.tools import VectorstoreTool
from vector_store import K, bench_file

WORDS = [
    "battery",
    "charger",
    "cable",
    "adapter",
    "laptop",
    "phone",
    "tablet",
    "screen",
    "glass",
    "case",
    "cover",
    "stand",
    "desk",
    "chair",
    "lamp",
    "light",
    "bulb",
    "kettle",
    "coffee",
    "grinder",
    "filter",
    "mug",
    "bottle",
    "bag",
    "backpack",
    "jacket",
    "shoe",
    "boot",
    "sock",
    "glove",
    "hat",
    "scarf",
    "tent",
    "stove",
    "lantern",
    "rope",
    "knife",
    "map",
    "compass",
    "waterproof",
    "lightweight",
    "durable",
    "compact",
    "foldable",
    "wireless",
    "rechargeable",
    "insulated",
    "warm",
    "breathable",
    "quiet",
    "fast",
    "slow",
    "strong",
    "soft",
    "hard",
    "bright",
    "dark",
    "small",
    "large",
    "long",
    "short",
    "travel",
    "hiking",
    "running",
    "cycling",
    "office",
    "kitchen",
    "garden",
    "winter",
    "summer",
    "rain",
    "snow",
    "wind",
    "battery",
    "life",
    "warranty",
    "returns",
    "shipping",
    "refund",
    "exchange",
    "size",
    "colour",
    "fabric",
    "leather",
    "steel",
    "aluminium",
    "cotton",
    "wool",
    "plastic",
    "wood",
    "bamboo",
    "recycled",
    "organic",
    "vegan",
    "premium",
]
TOTAL_CHUNKS = 100_000
QUERIES = 60


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def write_sources(root: Path, rows: int, pages: int) -> None:
    rng = random.Random(7)
    data = root / "data"
    (data / "pages").mkdir(parents=True)
    lines = ["sku,name,category,price,description"]
    for i in range(rows):
        description = " ".join(sentence(rng, 9) for _ in range(3))
        name = f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
        lines.append(f"p-{i},{name},{rng.choice(WORDS)},{rng.randint(5, 500)},{description}")
    (data / "products.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for page in range(pages):  # a page: a title, three sections, ~500 words
        parts = [f"# Guide {page}: {sentence(rng, 3)}"]
        for section in range(3):
            parts.append(f"## Part {section + 1}: {sentence(rng, 3)}")
            parts += [" ".join(sentence(rng, 12) for _ in range(4)) for _ in range(3)]
        (data / "pages" / f"guide-{page:03}.md").write_text("\n\n".join(parts) + "\n")
    (root / "agent.yaml").write_text(
        "name: bench\nmodel: {provider: openai, name: gpt-4o-mini}\n"
        "instructions: {inline: Answer from the catalogue and the guides.}\ntools:\n"
        "  - {type: vectorstore, name: products, description: Catalogue., "
        "source: data/products.csv, vector_field: description, id_field: sku, "
        "embedding_model: all-MiniLM-L6-v2}\n"
        "  - {type: vectorstore, name: guides, description: Guides., source: data/pages, "
        "embedding_model: all-MiniLM-L6-v2}\n"
    )


async def ingest(root: Path) -> tuple[dict[str, tuple[SyncReport, float]], list[SearchIndex]]:
    spec = load_agent(root)
    options = tool_context(spec, RunOptions())
    found: dict[str, tuple[SyncReport, float]] = {}
    indexes = []
    for tool in spec.tools:
        assert isinstance(tool, VectorstoreTool)
        index, missing = search_index(tool, spec, options)
        assert missing is None, missing
        start = time.perf_counter()
        async with index:
            report = await index.sync()
        found[tool.name] = (report, time.perf_counter() - start)
        indexes.append(index)
    return found, indexes


async def vectors_of(index: SearchIndex) -> np.ndarray:
    """The real vectors the ingestion made (from the embedder's cache: nothing is sent)."""
    assert index.embedder is not None
    texts = [chunk.text for chunk in read_all(index.ingest).chunks]
    return np.asarray(await index.embedder.embed(texts))


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    pages = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    with tempfile.TemporaryDirectory() as home:
        root = Path(home) / "agent"
        root.mkdir()
        os.environ["HOLODECK_HOME"] = str(Path(home) / "holodeck-home")
        write_sources(root, rows, pages)

        first, indexes = asyncio.run(ingest(root))
        total = sum(seconds for _, seconds in first.values())
        products, guides = first["products"], first["guides"]
        print(f"first ingestion ({rows:,} CSV rows, {pages} markdown pages, local embedder):")
        print(
            f"  products: {products[0].chunks:,} chunks in {products[1]:.1f} s, "
            f"{rows / products[1]:,.0f} rows/s"
        )
        print(
            f"  guides:   {guides[0].chunks:,} chunks in {guides[1]:.1f} s, "
            f"{pages / guides[1]:,.1f} pages/s"
        )

        again, _ = asyncio.run(ingest(root))
        rerun = sum(seconds for _, seconds in again.values())
        embedded = sum(report.chunks_embedded for report, _ in again.values())
        print(
            f"unchanged re-run: {rerun:.2f} s = {rerun / total:.1%} of the first "
            f"(target < 5%), {embedded} chunks embedded"
        )

        page = root / "data" / "pages" / "guide-007.md"
        page.write_text(page.read_text() + "\nA new closing paragraph about batteries.\n")
        changed, _ = asyncio.run(ingest(root))
        report, seconds = changed["guides"]
        print(
            f"one page changed: {seconds:.2f} s, files re-read {report.changed}, "
            f"{report.chunks_embedded} chunks embedded"
        )

        real = np.concatenate([asyncio.run(vectors_of(index)) for index in indexes]).astype(
            np.float32
        )
        rng = np.random.default_rng(3)
        copies = real[rng.integers(0, len(real), TOTAL_CHUNKS - len(real))]
        noisy = copies + 0.08 * rng.standard_normal(copies.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        matrix = np.concatenate([real, noisy]).astype(np.float32)
        questions = [sentence(random.Random(i), 6) for i in range(QUERIES)]
        assert indexes[0].embedder is not None
        queries = np.asarray(asyncio.run(indexes[0].embedder.embed(questions)))
        texts = [f"chunk {i}" for i in range(len(matrix))]
        result = asyncio.run(bench_file(Path(home) / "search", matrix, queries, texts))
        print(f"search over {len(matrix):,} chunks (embedded store, query vector given, k={K}):")
        print(
            f"  p50 {result['search_p50_ms']:.1f} ms, p95 {result['search_p95_ms']:.1f} ms "
            f"(target p50 < 20 ms); recall@10 {result['recall_at_10']:.3f} (target >= 0.95); "
            f"open {result['open_ms']:.1f} ms"
        )


if __name__ == "__main__":
    main()
