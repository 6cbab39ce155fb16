"""What the document tool's retrieval options cost, offline: an act of N sections (each
with subsections and definitions) ingested with `document_domain` and
`extract_definitions` against plain heading chunking; searches with and without the
offline reranker; and a re-ingest whose context lines all come from the cache.

Run: .venv/bin/python bench/retrieval_options.py [sections]   (default 2000)

Prints: ingest seconds and chunks for plain / domain+definitions; p50 search latency
(keyword mode, 20 candidates) without and with reranking; context lines' seconds for
the first ingest and a re-ingest into a new store, whose lines all come from the cache
(the offline writer: no model is called either way).
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from holodeck.config.loader import load_agent
from holodeck.runtime import RunOptions
from holodeck.search.tool_index import search_index

OFFLINE = RunOptions(model="test")


def act(sections: int) -> str:
    parts = ["# Synthetic Act\n"]
    for n in range(1, sections + 1):
        parts.append(
            f"SEC. {n}. PART {n}.\n"
            f'(a) DEFINITION.—The term "item {n}" means a thing registered under section {n}.\n'
            f"(b) DUTY.—A registrant shall file form {n} within {n % 90 + 1} days of a change.\n"
            f"(c) PENALTY.—A registrant who fails to file form {n} pays a penalty of ${n}.\n"
        )
    return "\n".join(parts)


def project(root: Path, text: str, options: str) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "data/act.md").write_text(text)
    (root / "agent.yaml").write_text(
        "name: bench\nmodel: {provider: test}\ninstructions: {inline: Help.}\ntools:\n"
        "  - type: hierarchical_document\n    name: act\n    description: Act.\n"
        "    source: data/act.md\n    search_mode: keyword\n    top_k: 5\n"
        + "".join(f"    {line}\n" for line in options.strip().splitlines())
    )
    return root


async def ingest(root: Path) -> tuple[float, int]:
    spec = load_agent(root)
    index, _ = search_index(spec.tools[0], spec, OFFLINE.for_agent(spec))  # type: ignore[arg-type]
    start = time.perf_counter()
    async with index:
        report = await index.sync()
    return time.perf_counter() - start, report.chunks


async def latency(root: Path, queries: list[str]) -> float:
    spec = load_agent(root)
    index, _ = search_index(spec.tools[0], spec, OFFLINE.for_agent(spec))  # type: ignore[arg-type]
    times = []
    async with index:
        await index.sync()
        for query in queries:
            start = time.perf_counter()
            await index.search(query)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def main(sections: int) -> None:
    text = act(sections)
    queries = [f"how many days to file form {n}" for n in range(1, 201)]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        plain = project(base / "plain", text, "chunking_strategy: structure")
        rich = project(
            base / "rich", text, "document_domain: us_legislative\nextract_definitions: true"
        )
        for name, root in (("plain headings", plain), ("domain+definitions", rich)):
            seconds, chunks = await ingest(root)
            print(f"ingest {name:20} {seconds:7.2f} s  {chunks:7d} chunks")
        reranked = project(base / "rerank", text, "enable_reranking: true\nrerank_candidates: 20")
        print(f"search p50 without reranking  {await latency(plain, queries):7.2f} ms")
        print(f"search p50 with offline rerank {await latency(reranked, queries):7.2f} ms")
        context = project(
            base / "context",
            text,
            "contextual_embeddings: true\ncontext_model: {provider: openai, name: gpt-4o-mini}",
        )
        first, chunks = await ingest(context)
        shutil.rmtree(context / ".holodeck" / "vectors")
        again, _ = await ingest(context)
        print(
            f"context lines, {chunks} chunks: first ingest {first:.2f} s, "
            f"re-ingest into a new store from the cache {again:.2f} s"
        )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
