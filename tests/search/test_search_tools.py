"""Search tools end to end: an agent's `vectorstore` and `hierarchical_document` tools
ingest their sources, embed them with the local model (or fall back to keywords), and
answer the model's queries with ranked, located results."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from click.testing import CliRunner
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from conftest import Write
from holodeck import RunOptions
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, ToolCallFinished, tool_context
from holodeck.search.tool_index import search_index

pytestmark = pytest.mark.anyio

LOCAL = "all-MiniLM-L6-v2"

DOCS = {
    "data/docs/passwords.md": """
        # Accounts

        ## Resetting a password

        Open Settings, choose Security and press "Reset password". A link arrives by email
        and stays valid for 30 minutes.
        """,
    "data/docs/shipping.txt": """
        Parcels leave our warehouse within two working days. Express delivery reaches most
        cities the next day; standard delivery takes three to five days.
        """,
    "data/docs/returns.md": """
        # Returns

        Unworn items can be sent back within 30 days for a full refund. Print the prepaid
        label from your order page.
        """,
}

PRODUCTS = """sku,name,description,price_usd,in_stock
p-1,Trail Runner,Lightweight running shoe with a grippy sole for muddy mountain trails,120,true
p-2,City Walker,Cushioned leather shoe for long days of walking on pavements,95,true
p-3,Rain Shell,Waterproof breathable jacket that packs into its own pocket,150,false
p-4,Trail Runner Copy,Lightweight running shoe with a grippy sole for muddy mountain trails,110,true
"""


def agent_yaml(tools: str, provider: str = "openai") -> str:
    return (
        "name: searcher\nmodel:\n  provider: "
        + provider
        + "\n  name: gpt-4o-mini\ninstructions:\n  inline: Answer from the search results.\n"
        + "tools:\n"
        + tools
    )


class Script:
    """A model that calls one tool with each query in turn, then answers "done"."""

    def __init__(self, tool: str, *queries: str) -> None:
        self.tool = tool
        self.queries = list(queries)

    def model(self) -> FunctionModel:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            if not self.queries:
                yield "done"
                return
            query = self.queries.pop(0)
            yield {0: DeltaToolCall(self.tool, json.dumps({"query": query}), tool_call_id="c1")}

        return FunctionModel(stream_function=stream, model_name="script")


async def ask(root: Path, tool: str, *queries: str) -> list[list[dict[str, Any]]]:
    """Each query's results, as the model received them."""
    script = Script(tool, *queries)
    found: list[list[dict[str, Any]]] = []
    async with Agent(load_agent(root), RunOptions(model=script.model())) as agent:
        for _ in queries:
            async for event in agent.run("go"):
                if isinstance(event, ToolCallFinished):
                    assert event.error is None, event.error
                    found.append(_as_results(event.result))
    return found


def _as_results(result: Any) -> list[dict[str, Any]]:
    if isinstance(result, ToolReturnPart):
        result = result.content
    if isinstance(result, str):
        result = json.loads(result)
    assert isinstance(result, list)
    return result


async def test_documents_are_searched_by_meaning_with_their_source(write: Write) -> None:
    root = write(
        {
            **DOCS,
            "agent.yaml": agent_yaml(
                f"  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
                f"    source: data/docs\n    embedding_model: {LOCAL}\n    top_k: 3\n"
            ),
        }
    )
    [results] = await ask(root, "docs", "I forgot my login secret, how do I get a new one?")
    assert results[0]["source_reference"].startswith("data/docs/passwords.md")
    assert "Reset password" in results[0]["matched_content"]
    scores = [r["relevance_score"] for r in results]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    assert len(results) == 3
    # the agent closed its store on leaving `async with` (closing saves the row map)
    assert list((root / ".holodeck" / "vectors").rglob("rows-*.npy"))


async def test_records_come_back_with_metadata_the_whole_record_and_ties(write: Write) -> None:
    root = write(
        {
            "data/products.csv": PRODUCTS,
            "agent.yaml": agent_yaml(
                "  - type: vectorstore\n    name: products\n    description: Catalog.\n"
                "    source: data/products.csv\n    vector_field: description\n"
                "    meta_fields: [sku, name, price_usd]\n    id_field: sku\n"
                f"    embedding_model: {LOCAL}\n    top_k: 1\n"
            ),
        }
    )
    [results] = await ask(root, "products", "shoes for running in the mountains")
    # p-1 and p-4 have the same description: equal vectors, equal scores, both returned
    assert {r["metadata"]["sku"] for r in results} == {"p-1", "p-4"}
    assert results[0]["relevance_score"] == results[1]["relevance_score"]
    first = next(r for r in results if r["metadata"]["sku"] == "p-1")
    assert first["metadata"] == {"sku": "p-1", "name": "Trail Runner", "price_usd": 120}
    assert first["record"]["in_stock"] is True and first["record"]["name"] == "Trail Runner"
    assert first["source_reference"] == "data/products.csv, record p-1"
    assert "price" not in first["matched_content"] and "120" not in first["matched_content"]


async def test_without_an_embedding_model_the_tool_says_so_once_and_uses_keywords(
    write: Write, caplog: pytest.LogCaptureFixture
) -> None:
    root = write(
        {
            **DOCS,
            # the offline `test` provider has no embeddings (and reaches no provider)
            "agent.yaml": agent_yaml(
                "  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
                "    source: data/docs\n",
                provider="test",
            ),
        }
    )
    caplog.set_level(logging.WARNING, logger="holodeck.search")
    spec = load_agent(root)
    index, missing = search_index(spec.tools[0], spec, tool_context(spec, RunOptions()))
    assert index.embedder is None and missing is not None
    found = await ask(root, "docs", "express delivery", "refund label")
    assert found[0][0]["source_reference"].startswith("data/docs/shipping.txt")
    assert found[1][0]["source_reference"].startswith("data/docs/returns.md")
    said = [r.getMessage() for r in caplog.records if "keywords" in r.getMessage()]
    assert len(said) == 1 and "docs" in said[0]


async def test_reruns_embed_only_what_changed(write: Write) -> None:
    root = write(
        {
            **DOCS,
            "agent.yaml": agent_yaml(
                f"  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
                f"    source: data/docs\n    embedding_model: {LOCAL}\n"
            ),
        }
    )
    spec = load_agent(root)
    options = tool_context(spec, RunOptions())

    async def sync() -> Any:
        index, _ = search_index(spec.tools[0], spec, options)
        async with index:
            return await index.sync(), index

    first, _ = await sync()
    assert first.files == 3 and len(first.changed) == 3 and first.chunks_embedded == first.chunks
    again, _ = await sync()
    assert again.changed == [] and again.chunks_embedded == 0 and again.chunks == first.chunks
    (root / "data/docs/shipping.txt").write_text("Drones deliver parcels in one hour.\n")
    (root / "data/docs/returns.md").unlink()
    changed, _ = await sync()
    assert changed.changed == ["data/docs/shipping.txt"]
    assert changed.removed == ["data/docs/returns.md"]
    assert changed.chunks_embedded == 1
    [results] = await ask(root, "docs", "How fast are drones?")
    sources = {r["source_reference"].split(",")[0] for r in results}
    assert "data/docs/returns.md" not in sources
    assert results[0]["matched_content"].startswith("Drones deliver")


MANUAL = """
# Installation

## Linux

Run the installer with sudo. The service starts on boot.

## Windows

Double-click setup.exe and accept the licence agreement.

# Troubleshooting

## Error E-1042

The error code E-1042 means the licence file is missing: copy licence.key to the
install folder.
"""


async def test_document_tool_keeps_heading_paths_and_finds_exact_codes(write: Write) -> None:
    tool = (
        "  - type: hierarchical_document\n    name: manual\n    description: The manual.\n"
        f"    source: manual.md\n    embedding_model: {LOCAL}\n    top_k: 2\n"
    )
    root = write({"manual.md": MANUAL, "agent.yaml": agent_yaml(tool)})
    [hybrid] = await ask(root, "manual", "what does E-1042 mean")
    assert hybrid[0]["heading_path"] == ["Troubleshooting", "Error E-1042"]
    assert hybrid[0]["source_reference"] == "manual.md > Troubleshooting > Error E-1042"
    exact_root = write(
        {"manual.md": MANUAL, "agent.yaml": agent_yaml(tool + "    search_mode: exact\n")}
    )
    [exact] = await ask(exact_root, "manual", "setup.exe")
    assert [r["heading_path"] for r in exact] == [["Installation", "Windows"]]


async def test_min_similarity_score_drops_weak_matches(write: Write) -> None:
    root = write(
        {
            **DOCS,
            "agent.yaml": agent_yaml(
                f"  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
                f"    source: data/docs\n    embedding_model: {LOCAL}\n"
                "    min_similarity_score: 0.35\n"
            ),
        }
    )
    [results] = await ask(root, "docs", "reset my password")
    assert results and all(r["relevance_score"] >= 0.35 for r in results)
    assert len(results) < 3


def test_ingest_command_reports_and_is_incremental(write: Write) -> None:
    root = write(
        {
            **DOCS,
            "agent.yaml": agent_yaml(
                f"  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
                f"    source: data/docs\n    embedding_model: {LOCAL}\n"
            ),
        }
    )
    runner = CliRunner()
    first = runner.invoke(cli, ["ingest", str(root)])
    assert first.exit_code == 0, first.output
    assert "docs: 3 files, 3 changed, 0 removed" in first.output
    assert "local" in first.output.lower()
    again = runner.invoke(cli, ["ingest", str(root)])
    assert "3 files, 0 changed, 0 removed; 0 chunks embedded" in again.output
    wrong = runner.invoke(cli, ["ingest", str(root), "--tool", "dcos"])
    assert wrong.exit_code == 2 and "no search tool `dcos`" in wrong.output


def test_validate_checks_the_mapping_against_the_data(write: Write) -> None:
    root = write(
        {
            "data/products.csv": PRODUCTS,
            "agent.yaml": agent_yaml(
                "  - type: vectorstore\n    name: products\n    description: Catalog.\n"
                "    source: data/products.csv\n    vector_field: descripton\n"
                "    meta_fields: [sku, prize]\n"
            ),
        }
    )
    result = CliRunner().invoke(cli, ["validate", str(root)])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    vector = next(line for line in lines if "descripton" in line)
    assert "agent.yaml:12:" in vector and "description" in vector
    prize = next(line for line in lines if "prize" in line)
    assert "agent.yaml:13:" in prize


def test_validate_says_which_embedding_model_each_tool_uses(write: Write) -> None:
    root = write(
        {
            **DOCS,
            "agent.yaml": agent_yaml(
                "  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
                "    source: data/docs\n"
                f"  - type: vectorstore\n    name: local_docs\n    description: Same.\n"
                f"    source: data/docs\n    embedding_model: {LOCAL}\n"
            ),
        }
    )
    result = CliRunner().invoke(cli, ["validate", str(root)], env={"OPENAI_API_KEY": "sk-x"})
    assert result.exit_code == 0, result.output
    assert "search tool `docs`: embeds with openai" in result.output
    assert "text-embedding-3-small" in result.output
    assert "search tool `local_docs`: embeds with local" in result.output


async def test_a_store_that_is_down_fails_the_tool_not_the_agent(
    write: Write, caplog: pytest.LogCaptureFixture
) -> None:
    root = write(
        {
            **DOCS,
            "agent.yaml": agent_yaml(
                "  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
                "    source: data/docs\n    database:\n      provider: redis\n"
                "      connection_string: redis://127.0.0.1:9/0\n"
            ),
        }
    )
    script = Script("docs", "anything")
    async with Agent(load_agent(root), RunOptions(model=script.model())) as agent:
        events = [e async for e in agent.run("go")]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished and finished[0].error is not None and "unavailable" in finished[0].error
    assert any("127.0.0.1:9" in r.getMessage() for r in caplog.records)


def test_a_large_source_shows_a_progress_bar_on_a_terminal(write: Write) -> None:
    rows = "\n".join(f"p-{i},Item {i} is a sturdy thing for task number {i}" for i in range(600))
    root = write(
        {
            "data/items.csv": "sku,description\n" + rows + "\n",
            "agent.yaml": agent_yaml(
                "  - type: vectorstore\n    name: items\n    description: Items.\n"
                f"    source: data/items.csv\n    embedding_model: {LOCAL}\n"
            ),
        }
    )
    holodeck = Path(sys.executable).parent / "holodeck"
    child = pexpect.spawn(
        str(holodeck),
        ["ingest", str(root)],
        env={**os.environ, "COLUMNS": "120"},
        encoding="utf-8",
        dimensions=(40, 120),
        timeout=120,
    )
    child.expect(r"items: embedding")
    child.expect(r"\d+/600")
    child.expect(r"items: 1 files, 1 changed, 0 removed; 600 chunks embedded")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_served_agent_is_ready_once_its_sources_are_ingested(write: Write, serve: Any) -> None:
    root = write(
        {
            **DOCS,
            "agent.yaml": agent_yaml(
                "  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
                "    source: data/docs\n",
                provider="test",
            ),
        }
    )
    with serve(root) as server:  # returns once GET /ready says 200
        stored = list((root / ".holodeck" / "vectors").rglob("*"))
        assert stored, "ready before the sources were stored"
        answer = server.chat("How fast is express delivery? /call docs")
        assert answer.status_code == 200
        assert [c["name"] for c in answer.json()["tool_calls"]] == ["docs"]


async def test_with_the_local_model_chunks_fit_what_it_reads(write: Write) -> None:
    """all-MiniLM-L6-v2 ignores what follows its first 256 word pieces: unless the tool
    sets `chunk_size`, chunks are cut to fit, so the end of a long text is searchable."""
    filler = " ".join(
        f"Paragraph filler sentence number {i} about nothing much." for i in range(60)
    )
    text = filler + " The lighthouse keeper feeds three orange cats every morning."
    root = write(
        {
            "notes.txt": text,
            "agent.yaml": agent_yaml(
                "  - type: vectorstore\n    name: notes\n    description: Notes.\n"
                f"    source: notes.txt\n    embedding_model: {LOCAL}\n    top_k: 1\n"
                f"  - type: vectorstore\n    name: big\n    description: Notes.\n"
                f"    source: notes.txt\n    embedding_model: {LOCAL}\n    chunk_size: 800\n"
            ),
        }
    )
    spec = load_agent(root)
    options = tool_context(spec, RunOptions())
    fitted, _ = search_index(spec.tools[0], spec, options)
    chosen, _ = search_index(spec.tools[1], spec, options)
    assert fitted.ingest.chunk_size == 200 and chosen.ingest.chunk_size == 800
    [results] = await ask(root, "notes", "who looks after the cats at the lighthouse?")
    assert "orange cats" in results[0]["matched_content"]


def test_an_offline_run_never_calls_a_provider_for_embeddings(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-would-be-used")
    root = write(
        {
            **DOCS,
            "agent.yaml": agent_yaml(
                "  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
                "    source: data/docs\n    embedding_model: openai/text-embedding-3-small\n"
                f"  - type: vectorstore\n    name: local_docs\n    description: Same.\n"
                f"    source: data/docs\n    embedding_model: {LOCAL}\n"
            ),
        }
    )
    spec = load_agent(root)
    options = tool_context(spec, RunOptions(model="test"))
    remote, why = search_index(spec.tools[0], spec, options)
    assert remote.embedder is None and why is not None and "does not call" in why
    local, _ = search_index(spec.tools[1], spec, options)
    assert local.embedder is not None and local.embedder.name.startswith("local")


@pytest.mark.parametrize(
    ("fixture", "database"),
    [
        ("pgvector_url", "provider: postgres\n      connection_string: {url}"),
        ("redis_stack_url", "provider: redis\n      connection_string: {url}"),
        ("chroma_url", "provider: chromadb\n      url: {url}"),
        (None, "provider: qdrant\n      path: qdrant-data"),
    ],
)
async def test_an_agent_searches_its_sources_in_a_vector_database(
    write: Write, request: pytest.FixtureRequest, fixture: str | None, database: str
) -> None:
    """US 6.1: with a configured vector database, the source is ingested into it and
    searched there (real servers; Qdrant in its local mode, its server being on no
    registry). A second agent on the same database finds the files already stored."""
    url = request.getfixturevalue(fixture) if fixture else ""
    tools = (
        "  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
        f"    source: data/docs\n    embedding_model: {LOCAL}\n    top_k: 1\n"
        "    database:\n      " + database.format(url=url) + "\n"
    )
    root = write({**DOCS, "agent.yaml": agent_yaml(tools)})
    [results] = await ask(root, "docs", "How long is the password reset link valid?")
    assert results[0]["source_reference"].startswith("data/docs/passwords.md")
    spec = load_agent(root)
    index, _ = search_index(spec.tools[0], spec, tool_context(spec, RunOptions()))
    async with index:
        again = await index.sync()
    assert again.changed == [] and again.chunks == 3


async def test_the_offline_model_searches_with_the_users_question(write: Write) -> None:
    """`--model test` asks a search tool what the user asked, so an offline smoke run of a
    grounded agent retrieves real passages (by keywords) instead of nothing."""
    root = write(
        {
            **DOCS,
            "agent.yaml": agent_yaml(
                "  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
                "    source: data/docs\n"
            ),
        }
    )
    async with Agent(load_agent(root), RunOptions(model="test")) as agent:
        events = [e async for e in agent.run("How long does express delivery take? /call docs")]
    [call] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert call.args == {"query": "How long does express delivery take?"}
    assert _as_results(call.result)[0]["source_reference"].startswith("data/docs/shipping.txt")


async def test_a_store_that_failed_to_open_is_tried_again_later(write: Write) -> None:
    from holodeck.runtime.toolsets import SearchToolset

    blocker = "  - type: vectorstore\n    name: docs\n    description: Help pages.\n"
    root = write(
        {
            **DOCS,
            "agent.yaml": agent_yaml(
                blocker + "    source: data/docs\n    database:\n      provider: embedded\n"
                "      path: store\n",
                provider="test",
            ),
            "store": "a file where the store's directory should be",
        }
    )
    agent = Agent(load_agent(root), RunOptions(model="test"))
    searches: list[SearchToolset] = []
    for toolset in agent._toolsets:
        toolset.apply(lambda t: searches.append(t) if isinstance(t, SearchToolset) else None)
    searches[0].retry_after_s = 0.0  # this agent's toolset only
    async with agent:
        first = [e async for e in agent.run("express delivery /call docs")]
        [failed] = [e for e in first if isinstance(e, ToolCallFinished)]
        assert failed.error is not None and "unavailable" in failed.error
        (root / "store").unlink()
        second = [e async for e in agent.run("express delivery /call docs")]
        [found] = [e for e in second if isinstance(e, ToolCallFinished)]
    assert found.error is None
    assert _as_results(found.result)[0]["source_reference"].startswith("data/docs/shipping")
