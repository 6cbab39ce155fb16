"""docs/search.md's examples are what the code reads: its YAML loads as written (with the
data files it names), its `holodeck ingest` lines run, and its JSON result has the keys a
search returns."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import Write
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.search.results import SearchResult
from holodeck.spec.models.vector_databases import DatabaseConnection

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "search.md").read_text()
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```$", PAGE, flags=re.M | re.S)
HEAD = "name: my-agent\nmodel: {provider: test}\ninstructions: {inline: Help.}\n"
DATA = {
    "data/docs/a.md": "# A\n\ntext\n",
    "data/products.csv": "sku,name,price,description\np-1,Shoe,12,A light shoe\n",
    "docs/manual.md": "# Manual\n\ntext\n",
    "data/feed.json": json.dumps(
        {
            "issue": 7,
            "publisher": {"name": "Acme"},
            "data": {"articles": [{"title": "T", "body": "B"}]},
        }
    ),
}


def blocks(kind: str) -> list[str]:
    return [text for language, text in BLOCKS if language == kind]


def test_the_yaml_examples_load_as_written(write: Write, monkeypatch: pytest.MonkeyPatch) -> None:
    tools, feed, _retrieval, embedding, database = blocks("yaml")  # _: its own test
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs")
    first = load_agent(write({**DATA, "agent.yaml": HEAD + tools}))
    assert [t.name for t in first.tools] == ["search_docs", "search_products", "search_manual"]
    second = load_agent(write({**DATA, "agent.yaml": HEAD + "tools:\n" + feed}))
    assert second.tools[0].name == "search_articles"
    third = load_agent(write({**DATA, "agent.yaml": HEAD + embedding + "tools:\n" + feed}))
    assert third.embedding_provider is not None
    assert third.embedding_provider.name == "text-embedding-3-small"
    monkeypatch.setenv("KB_DATABASE_URL", "postgresql://kb@127.0.0.1/kb")
    tool = "  - type: vectorstore\n    name: kb\n    description: KB.\n    source: data/docs\n"
    fourth = load_agent(write({**DATA, "agent.yaml": HEAD + "tools:\n" + tool + database}))
    store = fourth.tools[0].database  # type: ignore[union-attr]
    assert isinstance(store, DatabaseConnection) and store.provider == "postgres"


def test_the_retrieval_options_example_loads_without_warnings(write: Write) -> None:
    retrieval = blocks("yaml")[2]
    act = '# Act\n\nSEC. 1. DEFINITIONS.\n(a) The term "act" means this Act.\n'
    spec = load_agent(write({"data/act.md": act, "agent.yaml": HEAD + retrieval}))
    assert [t.name for t in spec.tools] == ["act_search"] and spec.warnings == ()


def test_the_ingest_commands_run(write: Write) -> None:
    tools = blocks("yaml")[0]
    root = write({**DATA, "agent.yaml": HEAD + tools})
    (command,) = [b for b in blocks("bash") if "holodeck ingest" in b]
    for line in command.splitlines():
        words = shlex.split(line.split("#")[0])
        assert words[:2] == ["holodeck", "ingest"]
        args = [str(root) if w == "my-agent" else w for w in words[2:]]
        result = CliRunner().invoke(cli, ["ingest", *args])
        assert result.exit_code == 0, result.output
        assert "search_docs:" in result.output


def test_the_result_example_has_the_keys_a_search_returns() -> None:
    (example,) = blocks("json")
    [shown] = json.loads(example)
    made = SearchResult("text", {"sku": "p-1"}, "data/products.csv, record p-1", 0.5, {}).to_json()
    assert set(shown) == set(made)
