"""Ingestion against hostile files and large ones: one file that cannot be read is that
file's warning, never the end of the ingestion; reading a file costs bounded memory, a
batch of its records at a time; a served agent says which search tools failed."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import tool_context
from holodeck.search.index import SearchIndex
from holodeck.search.ingest import IngestOptions, chunk_file, read_pdf, source_files
from holodeck.search.stores import StoreLocation
from holodeck.search.tool_index import ingest_options, search_index, search_settings
from holodeck.spec.models.tools import VectorstoreTool
from hostile_files import deep_outline_pdf, flate_bomb_pdf, nested_json
from server_harness import Serve

MEASURED = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"code": done.returncode, "out": done.stdout + done.stderr, "peak_kib": peak}))
"""


def holodeck(*args: str, cwd: Path) -> dict[str, Any]:
    """`holodeck ARGS` as a process of its own: exit code, output, peak memory (KiB)."""
    command = [sys.executable, "-c", MEASURED, sys.executable, "-m", "holodeck", *args]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def search(root: Path, tool: str, query: str) -> list[str]:
    """Where the tool's results for `query` come from."""
    spec = load_agent(root)
    [definition] = [t for t in spec.tools if t.name == tool]
    index, _ = search_index(definition, spec, tool_context(spec, RunOptions(model="test")))

    async def ask() -> list[str]:
        async with index:
            return [r.source_reference for r in await index.search(query)]

    return asyncio.run(ask())


AGENT = """
name: walls
model:
  provider: test
instructions:
  inline: Answer from the search results.
tools:
  - type: vectorstore
    name: kb
    description: Knowledge base.
    source: data
  - type: hierarchical_document
    name: manual
    description: The manual.
    source: docs
"""


def test_hostile_files_are_each_a_warning_and_the_rest_is_ingested(write: Write) -> None:
    root = write(
        {
            "agent.yaml": AGENT,
            "data/delivery.md": "Express delivery reaches most cities the next day.\n",
            "data/deep.json": nested_json(10**6),
            "data/deep_without_extension": nested_json(10**5),
            "data/returns.jsonl": json.dumps({"text": "Refunds arrive within five days"})
            + "\n"
            + nested_json(10**5)
            + "\n",
        }
    )
    (root / "data/bomb.pdf").write_bytes(flate_bomb_pdf([4096], "hidden under spaces"))
    (root / "docs").mkdir()
    (root / "docs/manual.pdf").write_bytes(
        deep_outline_pdf(3000, "Calibrate the sensor every week, before the first shift.")
    )

    run = holodeck("ingest", str(root), cwd=root)

    assert run["code"] == 0, run["out"]
    warnings = [line.strip() for line in run["out"].splitlines() if "warning:" in line]

    def warning(about: str) -> str:
        return next(line for line in warnings if f" {about}" in line)

    assert "nested deeper than" in warning("data/deep.json:")
    assert "nested deeper than" in warning("data/deep_without_extension:")
    assert "line 2" in warning("data/returns.jsonl")
    assert "nested deeper than" in warning("data/returns.jsonl")
    bomb = warning("data/bomb.pdf:")
    assert "inflate to more than 64 MiB" in bomb and "decompression bomb" in bomb
    outline = warning("docs/manual.pdf:")
    assert "outline" in outline and "heading-like lines" in outline
    assert len(warnings) == 5, warnings
    # a 4 GiB stream was refused without being inflated
    assert run["peak_kib"] < 1024 * 1024, run["peak_kib"]

    assert search(root, "kb", "express delivery")[0].startswith("data/delivery.md")
    assert search(root, "kb", "refunds")[0].startswith("data/returns.jsonl, record 0")
    assert search(root, "manual", "calibrate sensor")[0].startswith("docs/manual.pdf")


def test_the_decompression_cap_counts_every_stream_of_the_file() -> None:
    """Three streams of 1 MiB: each under the cap, all together over it."""
    pdf = flate_bomb_pdf([1, 1, 1], "the last page")
    with pytest.raises(ValueError, match=r"inflate to more than 2 MiB"):
        read_pdf(pdf, max_decoded=2 << 20)
    assert "the last page" in read_pdf(pdf, max_decoded=4 << 20).text


def test_validate_reports_json_too_deep_to_read(write: Write) -> None:
    root = write(
        {
            "agent.yaml": AGENT.split("  - type: hierarchical_document")[0]
            + "    vector_field: text\n",
            "data/deep.json": nested_json(10**6),
        }
    )
    run = holodeck("validate", str(root), cwd=root)
    assert run["code"] == 2, run["out"]
    assert "data/deep.json cannot be read as JSON" in run["out"]
    assert "nested deeper than" in run["out"] and "Traceback" not in run["out"]


def test_a_served_agent_whose_search_source_failed_says_so_when_ready(
    write: Write, serve: Serve
) -> None:
    root = write(
        {
            "agent.yaml": AGENT.replace(
                "source: docs",
                "source: docs\n    database:\n      provider: embedded\n      path: store",
            ),
            "data/delivery.md": "Express delivery reaches most cities the next day.\n",
            "docs/manual.md": "# Manual\n\nCalibrate the sensor every week.\n",
            "store": "a file where the manual's store directory should be",
        }
    )
    with serve(root) as server:
        ready = server.client.get("/ready")
        listed = server.client.get("/v1/agents").json()["agents"]
    assert ready.status_code == 200  # the agent answers, without that tool
    [agent] = ready.json()["agents"]
    assert agent["status"] == "ready"
    assert set(agent["tool_failures"]) == {"manual"}
    assert "store" in agent["tool_failures"]["manual"]
    assert listed[0]["tool_failures"] == agent["tool_failures"]


class Counting:
    """An embedding model with no network: a text's vector comes from its hash. It notes,
    at each call, how many texts it was given and how many chunks the store held."""

    name = "test:counting"

    def __init__(self) -> None:
        self.index: SearchIndex | None = None
        self.calls: list[tuple[int, int]] = []

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        stored = await self.index.store.count() if self.index is not None else 0
        self.calls.append((len(texts), stored))
        rows = [np.random.default_rng(zlib.crc32(t.encode())).normal(size=8) for t in texts]
        vectors = np.array(rows, dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.anyio
async def test_a_large_file_is_read_embedded_and_stored_a_batch_at_a_time(
    tmp_path: Path,
) -> None:
    lines = [
        f"p-{i},Item {i},A sturdy thing for task number {i} of the workshop" for i in range(2000)
    ]
    (tmp_path / "items.csv").write_text("sku,name,description\n" + "\n".join(lines) + "\n")
    tool = VectorstoreTool(
        name="items",
        description="Items.",
        source="items.csv",
        vector_field="description",
        meta_fields=["sku", "name"],
        id_field="sku",
    )
    model = Counting()
    index = SearchIndex(
        "items",
        ingest_options(tool, tmp_path),
        StoreLocation("embedded", tmp_path / "vectors"),
        "items",
        model,
        search_settings(tool),
        dimensions=8,
    )
    index.batch_size = 100
    async with index:
        model.index = index
        report = await index.sync()
        found = await index.search("A sturdy thing for task number 1734 of the workshop")
    assert report.chunks == report.chunks_embedded == 2000 and not report.issues
    # never more than a batch (and the group of rows read past it) embedded ahead of the store
    embedded = 0
    for size, stored in model.calls:
        assert embedded - stored <= 100 + 64, model.calls
        embedded += size
    assert max(size for size, _ in model.calls) <= 100 + 64
    # the parts' vectors line up with their chunks
    assert found[0].source_reference == "items.csv, record p-1734"
    assert found[0].metadata == {"sku": "p-1734", "name": "Item 1734"}


def test_a_file_lists_its_first_thousand_problems_and_counts_the_rest(tmp_path: Path) -> None:
    lines = [json.dumps({"id": n, "title": f"Record {n}"}) for n in range(1500)]
    lines[700] = '{"id": 700, "title": '  # cut short
    (tmp_path / "records.jsonl").write_text("\n".join(lines) + "\n")
    options = IngestOptions(
        source=tmp_path / "records.jsonl", root=tmp_path, vector_fields=("body",)
    )
    [file] = source_files(options)
    chunks, issues = chunk_file(file, options)
    assert chunks == []
    listed, summary = issues[:-1], issues[-1]
    assert len(listed) == 1000
    # read a batch of lines at a time, records keep their place in the file
    assert [issue.record_index for issue in listed] == list(range(1000))
    assert listed[5].message == "record 5 has no field 'body' to embed"
    assert "line 701 is not valid JSON" in listed[700].message
    assert summary.message == "500 more problems in records.jsonl are not listed"
