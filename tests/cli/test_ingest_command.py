"""`holodeck ingest` against real embedding servers over HTTP: vectors are known by what
made them (model and endpoint), a change of endpoint or of width embeds again and says
so, `--rebuild` starts over, and the output reads whole on a terminal and in a log."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from click.testing import CliRunner

from conftest import Write
from holodeck import RunOptions
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.runtime import tool_context
from holodeck.search.tool_index import search_index
from scripted_servers import EmbeddingsServer

DOCS = {
    "data/returns.md": "# Returns\n\nUnworn items can be sent back within 30 days.\n",
    "data/shipping.md": "# Shipping\n\nParcels leave the warehouse within two days.\n",
}
AGENT = """
name: shop
model:
  provider: openai
  name: gpt-4o-mini
instructions:
  inline: Answer from the search results.
tools:
  - type: vectorstore
    name: docs
    description: Help pages.
    source: data
    embedding_model: house-embedder
"""


@pytest.fixture
def servers() -> Iterator[tuple[EmbeddingsServer, EmbeddingsServer]]:
    """Two servers answering for the same model name: one 8 wide, one 256 wide."""
    narrow, wide = EmbeddingsServer(dim=8), EmbeddingsServer(dim=256)
    narrow.start()
    wide.start()
    yield narrow, wide
    narrow.stop()
    wide.stop()


def env_for(server: EmbeddingsServer) -> dict[str, str]:
    return {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.url}


def ingest(root: Path, server: EmbeddingsServer, *args: str) -> str:
    result = CliRunner().invoke(cli, ["ingest", str(root), *args], env=env_for(server))
    assert result.exit_code == 0, result.output
    return result.output


def search(root: Path, query: str) -> list[str]:
    """Where the `docs` tool's results for `query` come from (the caller's environment)."""
    spec = load_agent(root)
    index, missing = search_index(spec.tools[0], spec, tool_context(spec, RunOptions()))  # type: ignore[arg-type]
    assert missing is None

    async def ask() -> list[str]:
        async with index:
            return [r.source_reference for r in await index.search(query)]

    return asyncio.run(ask())


def texts(server: EmbeddingsServer) -> set[str]:
    return {text for batch in server.inputs() for text in batch}


def test_the_same_model_name_at_another_endpoint_is_embedded_again(
    write: Write,
    servers: tuple[EmbeddingsServer, EmbeddingsServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    narrow, wide = servers
    root = write({**DOCS, "agent.yaml": AGENT})
    first = ingest(root, narrow)
    assert "docs: 2 files, 2 changed, 0 removed; 2 chunks embedded" in first

    second = ingest(root, wide)
    # the wide server embedded every chunk: nothing of the narrow one was read back
    assert "docs: 2 files, 2 changed, 0 removed; 2 chunks embedded" in second
    assert f"openai:house-embedder at {narrow.url} (8 dimensions)" in first
    assert any("Unworn items" in t for t in texts(wide))
    assert any("Parcels leave" in t for t in texts(wide))
    [note] = [line for line in second.splitlines() if "vectors were made by" in line]
    assert f"at {narrow.url} (8 dimensions)" in note and f"at {wide.url} (256 dimensions)" in note

    for variable, value in env_for(wide).items():
        monkeypatch.setenv(variable, value)
    assert search(root, "send items back")  # a 256-wide query in a 256-wide collection

    back = ingest(root, narrow)  # the narrow one's vectors are still stored apart
    assert "docs: 2 files, 0 changed, 0 removed; 0 chunks embedded" in back


def test_a_query_after_the_model_changed_width_embeds_again(
    write: Write,
    servers: tuple[EmbeddingsServer, EmbeddingsServer],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    narrow, _ = servers
    root = write({**DOCS, "agent.yaml": AGENT})
    ingest(root, narrow)
    narrow.dim = 32  # another model pulled under the same name, at the same endpoint
    for variable, value in env_for(narrow).items():
        monkeypatch.setenv(variable, value)
    with caplog.at_level(logging.WARNING, logger="holodeck.search"):
        found = search(root, "send items back")
    assert sorted(where.split(",")[0] for where in found) == sorted(DOCS)  # no width error
    said = [r.getMessage() for r in caplog.records if "32-dimension vectors" in r.getMessage()]
    assert said == [
        f"search tool docs: openai:house-embedder at {narrow.url} now gives 32-dimension "
        "vectors, not 8: its sources are embedded again"
    ]
    again = ingest(root, narrow)
    assert "2 files, 0 changed" in again and "(32 dimensions)" in again


def test_an_ingest_after_the_model_changed_width_embeds_everything_again(
    write: Write, servers: tuple[EmbeddingsServer, EmbeddingsServer]
) -> None:
    narrow, _ = servers
    root = write({**DOCS, "agent.yaml": AGENT})
    ingest(root, narrow)
    narrow.dim = 32
    (root / "data" / "returns.md").write_text("# Returns\n\nRefunds take five days.\n")
    output = ingest(root, narrow)
    assert "openai:house-embedder" in output and "now gives 32-dimension vectors, not 8" in output
    # the unchanged file too: its 8-wide vectors cannot sit beside 32-wide ones
    assert "docs: 2 files, 2 changed, 0 removed; 2 chunks embedded, 2 stored" in output
    assert "(32 dimensions)" in output


def test_rebuild_drops_the_index_and_the_cache_and_embeds_everything(
    write: Write, servers: tuple[EmbeddingsServer, EmbeddingsServer]
) -> None:
    narrow, _ = servers
    root = write({**DOCS, "agent.yaml": AGENT})
    ingest(root, narrow)
    asked = len(narrow.requests)
    output = ingest(root, narrow, "--rebuild")
    assert "docs: dropped 2 stored files and their cached vectors" in output
    assert "docs: 2 files, 2 changed, 0 removed; 2 chunks embedded, 2 stored" in output
    # the chunks were sent again: nothing came from the cache
    sent = [t for batch in narrow.inputs()[asked:] for t in batch]
    assert any("Unworn items" in t for t in sent) and any("Parcels" in t for t in sent)


def rows_csv(count: int) -> str:
    rows = "\n".join(f"p-{i},Item {i} is a sturdy thing for task {i}" for i in range(count))
    return "sku,description\n" + rows + "\n"


ITEMS_AGENT = AGENT.replace("name: docs", "name: items_with_a_long_name").replace(
    "source: data", "source: items.csv"
)


def test_redirected_output_has_plain_progress_lines_and_a_whole_summary(
    write: Write, servers: tuple[EmbeddingsServer, EmbeddingsServer]
) -> None:
    narrow, _ = servers
    root = write({"items.csv": rows_csv(600), "agent.yaml": ITEMS_AGENT})
    done = subprocess.run(
        [sys.executable, "-m", "holodeck", "ingest", str(root)],
        env={**os.environ, **env_for(narrow), "COLUMNS": "60"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    progress = [line for line in done.stderr.splitlines() if "embedding" in line]
    assert progress[-1] == "items_with_a_long_name: embedding 600/600", done.stderr
    assert 2 <= len(progress) <= 12
    [summary] = done.stdout.splitlines()
    assert re.fullmatch(
        r"items_with_a_long_name: 1 files, 1 changed, 0 removed; 600 chunks embedded, "
        r"600 stored; openai:house-embedder at \S+ \(8 dimensions\); \d+\.\d s",
        summary,
    ), summary


def test_on_a_terminal_the_summary_follows_the_bar_whole(
    write: Write, servers: tuple[EmbeddingsServer, EmbeddingsServer]
) -> None:
    narrow, _ = servers
    root = write({"items.csv": rows_csv(600), "agent.yaml": ITEMS_AGENT})
    holodeck = Path(sys.executable).parent / "holodeck"
    child = pexpect.spawn(
        str(holodeck),
        ["ingest", str(root)],
        env={**os.environ, **env_for(narrow)},
        encoding="utf-8",
        dimensions=(40, 80),
        timeout=120,
    )
    child.expect(r"items_with_a_long_name: embedding")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    text = str(child.before)
    # the summary starts a line of its own and is not cut at the terminal's 80 columns
    found = re.search(r"(^|\n|\x1b\[2K)(items_with_a_long_name: 1 files, 1 changed[^\r\n]*)", text)
    assert found is not None, text
    assert found.group(2).rstrip().endswith(" s") and "(8 dimensions)" in found.group(2)
