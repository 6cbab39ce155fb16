"""Search-tool forms of the shipped HoloDeck (docs/compatibility.md, "Search tools"):
each loads and does what it says, or is refused at its line with what to write."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import scripted_servers
from conftest import Write
from holodeck import RunOptions
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.runtime import tool_context
from holodeck.search.tool_index import search_index, store_location
from holodeck.spec import SpecError
from holodeck.spec.models.tools import HierarchicalDocumentTool, VectorstoreTool
from scripted_servers import EmbeddingsServer

pytestmark = pytest.mark.anyio

embeddings_server = scripted_servers.embeddings_server


def agent(tool: str, top: str = "", provider: str = "openai") -> str:
    return (
        f"name: shipped\nmodel: {{provider: {provider}, name: some-model}}\n"
        f"instructions: {{inline: Help.}}\n{top}tools:\n{tool}"
    )


@pytest.mark.parametrize(
    ("written", "provider", "extra"),
    [
        ("chromadb", "chromadb", "url: http://127.0.0.1:8000"),
        ("chroma", "chromadb", "path: chroma-data"),
        ("qdrant", "qdrant", "url: http://127.0.0.1:6333"),
        ("redis-hashset", "redis", "connection_string: redis://127.0.0.1:6379/0"),
        ("redis-json", "redis", "connection_string: redis://127.0.0.1:6379/0"),
        ("postgres", "postgres", "connection_string: postgresql://u@127.0.0.1/kb"),
        ("pgvector", "postgres", "connection_string: postgresql://u@127.0.0.1/kb"),
        ("in-memory", "embedded", ""),
    ],
)
def test_the_shipped_database_providers_name_a_store_here(
    write: Write, written: str, provider: str, extra: str
) -> None:
    body = f"\n        {extra}" if extra else ""
    root = write(
        {
            "data/a.md": "text",
            "agent.yaml": agent(
                "  - type: vectorstore\n    name: docs\n    description: Docs.\n"
                f"    source: data\n    database:\n      provider: {written}{body}\n".replace(
                    "\n        ", "\n      "
                )
            ),
        }
    )
    spec = load_agent(root)
    tool = spec.tools[0]
    assert isinstance(tool, VectorstoreTool)
    location = store_location(tool, spec, tool_context(spec, RunOptions()))
    assert location.provider == provider
    if provider == "chromadb" and "path" in extra:
        assert location.path == root / "chroma-data" and location.url is None


@pytest.mark.parametrize("provider", ["azure-ai-search", "weaviate", "faiss", "pinecone"])
def test_databases_that_do_not_exist_here_are_refused_at_their_line(
    write: Write, provider: str
) -> None:
    root = write(
        {
            "data/a.md": "text",
            "agent.yaml": agent(
                "  - type: vectorstore\n    name: docs\n    description: Docs.\n"
                f"    source: data\n    database:\n      provider: {provider}\n"
            ),
        }
    )
    with pytest.raises(SpecError) as raised:
        load_agent(root)
    rendered = raised.value.diagnostics[0].render()
    assert "agent.yaml:10:" in rendered and "chromadb" in rendered and "qdrant" in rendered


def test_a_database_field_that_does_not_apply_is_refused(write: Write) -> None:
    root = write(
        {
            "data/a.md": "text",
            "agent.yaml": agent(
                "  - type: vectorstore\n    name: docs\n    description: Docs.\n"
                "    source: data\n    database:\n      provider: qdrant\n"
                "      url: http://127.0.0.1:6333\n      host: 127.0.0.1\n"
            ),
        }
    )
    with pytest.raises(SpecError) as raised:
        load_agent(root)
    assert "`host` does not apply to provider `qdrant`" in str(raised.value)


@pytest.mark.parametrize(
    ("field", "feature"),
    [
        ("keyword_index: {provider: opensearch}", "external keyword indexes"),
        ("defer_loading: false", "deferred tool loading"),
    ],
)
def test_document_tool_options_this_runtime_lacks_are_refused(
    write: Write, field: str, feature: str
) -> None:
    root = write(
        {
            "guide.md": "# A\n\ntext\n",
            "agent.yaml": agent(
                "  - type: hierarchical_document\n    name: guide\n    description: Guide.\n"
                f"    source: guide.md\n    {field}\n"
            ),
        }
    )
    with pytest.raises(SpecError) as raised:
        load_agent(root)
    text = str(raised.value)
    assert feature in text and "remove it" in text


def test_document_tool_hybrid_weights_must_add_up(write: Write) -> None:
    root = write(
        {
            "guide.md": "# A\n\ntext\n",
            "agent.yaml": agent(
                "  - type: hierarchical_document\n    name: guide\n    description: Guide.\n"
                "    source: guide.md\n    semantic_weight: 0.9\n"
            ),
        }
    )
    with pytest.raises(SpecError, match="add up to 1"):
        load_agent(root)
    fine = write(
        {
            "guide.md": "# A\n\ntext\n",
            "agent.yaml": agent(
                "  - type: hierarchical_document\n    name: guide\n    description: Guide.\n"
                "    source: guide.md\n    semantic_weight: 0.7\n    keyword_weight: 0.3\n"
                "    exact_weight: 0\n    rrf_k: 10\n"
            ),
        }
    )
    tool = load_agent(fine).tools[0]
    assert isinstance(tool, HierarchicalDocumentTool) and tool.rrf_k == 10


def test_embedding_dimensions_of_a_fixed_size_model_is_an_error(write: Write) -> None:
    root = write(
        {
            "data/a.md": "text",
            "agent.yaml": agent(
                "  - type: vectorstore\n    name: docs\n    description: Docs.\n"
                "    source: data\n    embedding_model: all-MiniLM-L6-v2\n"
                "    embedding_dimensions: 512\n"
            ),
        }
    )
    fine = write(
        {
            "data/a.md": "text",
            "agent.yaml": agent(
                "  - type: vectorstore\n    name: docs\n    description: Docs.\n    source: data\n"
            ),
        }
    )
    result = CliRunner().invoke(cli, ["validate", str(root), str(fine)])
    assert result.exit_code == 2 and "384" in result.output
    assert "search tool `docs`" in result.output and f"FAILED {root}" in result.output
    assert f"OK {fine}" in result.output  # the next definition is still checked


async def test_embedding_provider_embeds_for_an_agent_whose_provider_has_none(
    write: Write, embeddings_server: EmbeddingsServer
) -> None:
    """An Anthropic agent with the shipped `embedding_provider` block: its search tool
    embeds with that block's model, endpoint and key (over real HTTP)."""
    root = write(
        {
            "data/a.md": "Refunds take five days.\n",
            "agent.yaml": agent(
                "  - type: vectorstore\n    name: docs\n    description: Docs.\n    source: data\n",
                top=(
                    "embedding_provider:\n  provider: openai\n  name: text-embedding-3-small\n"
                    f"  endpoint: {embeddings_server.url}\n  api_key: sk-embed\n"
                ),
                provider="anthropic",
            ),
        }
    )
    spec = load_agent(root)
    index, missing = search_index(spec.tools[0], spec, tool_context(spec, RunOptions()))
    assert missing is None and index.embedder is not None
    assert index.embedder.name.startswith("openai:text-embedding-3-small")
    async with index:
        report = await index.sync()
        results = await index.search("refund delay")
    assert report.chunks_embedded == 1 and results[0].matched_content.startswith("Refunds")
    sent = [r for r in embeddings_server.requests if r.path == "/v1/embeddings"]
    assert sent and sent[0].body["model"] == "text-embedding-3-small"
    assert sent[0].headers["authorization"] == "Bearer sk-embed"


def test_embedding_provider_is_checked_like_a_model(write: Write, tmp_path: Path) -> None:
    root = write(
        {
            "data/a.md": "text",
            "agent.yaml": agent(
                "  - type: vectorstore\n    name: docs\n    description: Docs.\n    source: data\n",
                top="embedding_provider:\n  provider: opnai\n",
            ),
        }
    )
    result = CliRunner().invoke(cli, ["validate", str(root)])
    assert result.exit_code == 2 and "embedding_provider" in result.output
