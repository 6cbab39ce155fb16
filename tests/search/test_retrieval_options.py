"""The shipped HoloDeck's retrieval options on `hierarchical_document` tools, over real
indexed documents: reranking (a model through the provider layer, or the offline one),
model-written chunk contexts (contextual retrieval, cached), `document_domain` numbering
as sections, definitions as entries of their own, and the warnings for options that have
no effect as written. Model paths use the real OpenAI SDK over real HTTP against scripted
servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import scripted_servers
from conftest import Write
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.runtime import RunOptions, tool_context
from holodeck.search._types import Chunk, SourceFile
from holodeck.search.contextual import Contextualizer
from holodeck.search.results import SearchResult
from holodeck.search.tool_index import search_index
from holodeck.spec import SpecError
from scripted_servers import EmbeddingsServer, OpenAIServer, text
from search_files import make_pdf

pytestmark = pytest.mark.anyio

openai_server = scripted_servers.openai_server
embeddings_server = scripted_servers.embeddings_server

QUERY = "renew passport online"
OFFLINE = RunOptions(model="test")  # keyword search, no model or embedder called
GUIDE = """
    # Passports

    ## History

    Passport, passport, passport: the passport office and its first passport.

    ## Renewing

    To renew a passport online, sign in to your account with the email address you used
    before, upload a recent photo taken against a plain background, check the details we
    show you, pay the fee by card and wait for the confirmation message in your inbox.

    ## Fees

    Renew online and the fee is lower. Renew at a counter and it is higher.

    ## Opening hours

    Counters open at nine. Online services never close, so renew online at any hour.
    """

ACT = """
    # Model Registry Act

    SEC. 2. DEFINITIONS.
    In this Act:
    (1) The term "registered model" means a model entered in the register under section 4.
    (2) The term "registrant" means the person who submits a model for registration.

    SEC. 4. DUTIES OF REGISTRANTS.
    (a) FILING.—A registrant shall file a description of the model before it is offered.
    (b) UPDATES.—A registrant shall file an update within 30 days of a material change.

    SEC. 5. PENALTIES.
    (a) CIVIL PENALTY.—A registrant who fails to file is liable for a civil penalty.
    """


def agent(tool: str, *, model: str = "{provider: openai, name: gpt-4o-mini}", top: str = "") -> str:
    return (
        f"name: retrieval\nmodel: {model}\ninstructions: {{inline: Help.}}\n{top}"
        f"tools:\n  - type: hierarchical_document\n    name: guide\n    description: Guide.\n"
        + "".join(f"    {line}\n" for line in tool.strip().splitlines())
    )


def embeddings(server: EmbeddingsServer) -> str:
    return (
        "embedding_provider: {provider: openai, name: text-embedding-3-small, "
        f"endpoint: {server.url}, api_key: sk-embed}}\n"
    )


def chat_model(server: OpenAIServer) -> str:
    return f"{{provider: openai, name: gpt-4o-mini, endpoint: {server.url}, api_key: sk-chat}}"


async def search(root: Path, query: str, options: RunOptions | None = None) -> list[SearchResult]:
    spec = load_agent(root)
    index, _ = search_index(spec.tools[0], spec, tool_context(spec, options or RunOptions()))  # type: ignore[arg-type]
    async with index:
        await index.sync()
        return await index.search(query)


def headings(results: list[SearchResult]) -> list[str]:
    return [r.heading_path[-1] for r in results]


def chat_requests(server: OpenAIServer) -> list[Any]:
    return [r.body for r in server.requests if r.path.endswith("/chat/completions")]


# --- reranking ----------------------------------------------------------------------------


async def test_a_model_reranks_the_first_stage_candidates_over_real_http(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    plain = write(
        {
            "data/guide.md": GUIDE,
            "agent.yaml": agent("source: data/guide.md\nsearch_mode: keyword\ntop_k: 4"),
        }
    )
    first_stage = headings(await search(plain, QUERY, RunOptions(model="test")))
    assert len(first_stage) == 4
    root = write(
        {
            "data/guide.md": GUIDE,
            "agent.yaml": agent(
                "source: data/guide.md\nsearch_mode: keyword\ntop_k: 2\nenable_reranking: true\n"
                "rerank_candidates: 4",
                model=chat_model(openai_server),
                top=embeddings(embeddings_server),
            ),
        }
    )
    openai_server.script(text("4, 3"))
    results = await search(root, QUERY)
    # the model's order, cut to top_k; scores follow the new rank among the 4 candidates
    assert headings(results) == [first_stage[3], first_stage[2]]
    assert [r.relevance_score for r in results] == [1.0, 0.75]
    (request,) = chat_requests(openai_server)
    assert request["model"] == "gpt-4o-mini"
    prompt = request["messages"][-1]["content"]
    assert QUERY in prompt and "[4]" in prompt and "[5]" not in prompt  # 4 candidates read
    assert "first passport" in prompt  # the passages themselves, numbered


async def test_the_reranker_model_is_its_own_when_given(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    root = write(
        {
            "data/guide.md": GUIDE,
            "agent.yaml": agent(
                "source: data/guide.md\nsearch_mode: keyword\ntop_k: 1\nenable_reranking: true\n"
                f"reranker_model: {{provider: openai, name: rerank-mini, endpoint: {openai_server.url}, "
                "api_key: sk-rerank}",
                model="{provider: anthropic, name: claude-sonnet-4-5}",
                top=embeddings(embeddings_server),
            ),
        }
    )
    openai_server.script(text("[2] is best, then [1]"))
    results = await search(root, QUERY)
    (request,) = chat_requests(openai_server)
    assert request["model"] == "rerank-mini" and len(results) == 1
    assert results[0].relevance_score == 1.0
    assert openai_server.requests[0].headers["authorization"] == "Bearer sk-rerank"


async def test_the_offline_test_model_reranks_by_the_query_words_each_result_holds(
    write: Write,
) -> None:
    plain = write(
        {
            "data/guide.md": GUIDE,
            "agent.yaml": agent("source: data/guide.md\nsearch_mode: keyword\ntop_k: 3"),
        }
    )
    root = write(
        {
            "data/guide.md": GUIDE,
            "agent.yaml": agent(
                "source: data/guide.md\nsearch_mode: keyword\ntop_k: 3\nenable_reranking: true"
            ),
        }
    )
    offline = RunOptions(model="test")
    before = await search(plain, QUERY, offline)
    after = await search(root, QUERY, offline)
    assert headings(after) != headings(before)
    # the only section holding all three words comes first once reranked
    holding_all = [
        h
        for h, r in zip(headings(after), after, strict=True)
        if all(w in r.matched_content.lower() for w in QUERY.split())
    ]
    assert holding_all == ["Renewing"] and headings(after)[0] == "Renewing"
    assert headings(before)[0] != "Renewing"


def test_a_local_cross_encoder_reranker_is_refused_with_what_to_use(write: Write) -> None:
    root = write(
        {
            "data/guide.md": GUIDE,
            "agent.yaml": agent(
                "source: data/guide.md\nenable_reranking: true\n"
                "reranker_model: cross-encoder/ms-marco-MiniLM-L-6-v2"
            ),
        }
    )
    with pytest.raises(SpecError) as raised:
        load_agent(root)
    rendered = raised.value.diagnostics[0].render()
    assert "agent.yaml:10:" in rendered and "cross-encoder reranker cannot run here" in rendered
    assert "reranker_model: {provider: openai" in rendered


def test_rerank_candidates_below_top_k_is_refused(write: Write) -> None:
    root = write(
        {
            "data/guide.md": GUIDE,
            "agent.yaml": agent(
                "source: data/guide.md\ntop_k: 5\nenable_reranking: true\nrerank_candidates: 3"
            ),
        }
    )
    with pytest.raises(SpecError, match="must be at least `top_k`"):
        load_agent(root)


# --- contextual retrieval -----------------------------------------------------------------


async def test_the_context_model_writes_a_line_per_chunk_that_is_embedded_and_cached(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    root = write(
        {
            "data/guide.md": GUIDE,
            "agent.yaml": agent(
                "source: data/guide.md\nsearch_mode: keyword\ncontextual_embeddings: true\n"
                f"context_model: {chat_model(openai_server)}\ncontext_concurrency: 1\n"
                "context_max_tokens: 60",
                top=(
                    "embedding_provider: {provider: openai, name: text-embedding-3-small, "
                    f"endpoint: {embeddings_server.url}, api_key: sk-embed}}\n"
                ),
            ),
        }
    )
    lines = {
        "History": "Early history of the passport office.",
        "Renewing": "How to renew online.",
        "Fees": "What renewal costs.",
        "Opening hours": "When counters are open.",
    }
    openai_server.script(*(text(line) for line in lines.values()))
    results = await search(root, "renew")
    requests = chat_requests(openai_server)
    assert len(requests) == 4
    document = (root / "data/guide.md").read_text()
    for request, section in zip(requests, lines, strict=True):
        prompt = request["messages"][-1]["content"]
        assert document.strip() in prompt and f"## {section}" in prompt  # document + chunk
        assert request["max_completion_tokens"] == 60  # context_max_tokens
    for result in results:  # the stored text starts with its chunk's line
        assert result.matched_content.startswith(lines[result.heading_path[-1]] + "\n\n")
    embedded = [t for r in embeddings_server.requests for t in r.body["input"]]
    # what is embedded: heading path, then the context line, then the chunk
    assert any(
        t.startswith("Passports > Renewing\n\nHow to renew online.\n\n## Renewing")
        for t in embedded
    )
    # a new store (deleted, or another collection) re-ingests from the cache: no model call
    shutil.rmtree(root / ".holodeck" / "vectors")
    again = await search(root, "renew")
    assert len(chat_requests(openai_server)) == 4
    assert [r.matched_content for r in again] == [r.matched_content for r in results]
    # a changed document changes every chunk's context: each is asked for again
    guide = root / "data/guide.md"
    guide.write_text(guide.read_text() + "\nPassports are sent by post.\n")
    openai_server.script(*(text(f"New line {n}.") for n in range(4)))
    await search(root, "renew")
    assert len(chat_requests(openai_server)) == 8


async def test_offline_the_context_line_is_the_document_title(write: Write) -> None:
    root = write(
        {
            "data/guide.md": GUIDE,
            "agent.yaml": agent(
                "source: data/guide.md\nsearch_mode: keyword\ncontextual_embeddings: true\n"
                "context_model: {provider: openai, name: gpt-4o-mini}"
            ),
        }
    )
    results = await search(root, "renew", RunOptions(model="test"))
    assert results and all(r.matched_content.startswith('From "Passports".\n\n') for r in results)


# --- document_domain and definitions ------------------------------------------------------


async def test_a_legislative_domain_makes_sections_and_subsections_of_numbered_lines(
    write: Write,
) -> None:
    tool = "source: data/act.md\nsearch_mode: keyword\ntop_k: 1\n"
    plain = write({"data/act.md": ACT, "agent.yaml": agent(tool)})
    domain = write(
        {"data/act.md": ACT, "agent.yaml": agent(tool + "document_domain: us_legislative")}
    )
    shallow = write(
        {
            "data/act.md": ACT,
            "agent.yaml": agent(tool + "document_domain: us_legislative\nmax_subsection_depth: 3"),
        }
    )
    query = "file an update within 30 days"
    [before] = await search(plain, query, OFFLINE)
    [after] = await search(domain, query, OFFLINE)
    [sections_only] = await search(shallow, query, OFFLINE)
    assert before.heading_path == ("Model Registry Act",)
    assert after.heading_path[1] == "SEC. 4. DUTIES OF REGISTRANTS."
    assert after.heading_path[2].startswith("(b) UPDATES.")
    assert "FILING" not in after.matched_content  # (a) is a chunk of its own now
    assert sections_only.heading_path == ("Model Registry Act", "SEC. 4. DUTIES OF REGISTRANTS.")


async def test_definitions_become_entries_of_their_own(write: Write) -> None:
    tool = "source: data/act.md\nsearch_mode: keyword\ntop_k: 1\ndocument_domain: us_legislative\n"
    plain = write({"data/act.md": ACT, "agent.yaml": agent(tool)})
    defining = write({"data/act.md": ACT, "agent.yaml": agent(tool + "extract_definitions: true")})
    query = 'definition of "registrant"'
    [before] = await search(plain, query, OFFLINE)
    [after] = await search(defining, query, OFFLINE)
    assert "defined_term" not in before.metadata
    assert after.metadata == {"defined_term": "registrant"}
    assert after.matched_content.startswith('Definition of "registrant": (2) The term')
    assert "registered model" not in after.matched_content  # its own line, not the list
    assert after.heading_path[:2] == ("Model Registry Act", "SEC. 2. DEFINITIONS.")


# --- options without effect ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "line", "said"),
    [
        ("extract_cross_references: true", 9, "never extracted cross-references"),
        (
            "contextual_embeddings: false\ncontext_model: {provider: openai, name: gpt-4o-mini}",
            10,
            "only with `contextual_embeddings: true`",
        ),
        ("context_concurrency: 4", 9, "no context model writes chunk contexts"),
        ("max_subsection_depth: 2", 9, "without a `document_domain`"),
        ("reranker_model: openai/gpt-4o-mini", 9, "reranking is off"),
    ],
)
def test_options_without_effect_warn_at_their_line_and_fail_under_strict(
    write: Write, fields: str, line: int, said: str
) -> None:
    root = write({"data/guide.md": GUIDE, "agent.yaml": agent("source: data/guide.md\n" + fields)})
    spec = load_agent(root)
    (warning,) = spec.warnings
    assert f"agent.yaml:{line}:" in warning.render() and said in warning.message
    with pytest.raises(SpecError, match=said.split("`")[0]):
        load_agent(root, strict=True)


def test_the_options_in_use_load_without_warnings(write: Write) -> None:
    root = write(
        {
            "data/act.md": ACT,
            "agent.yaml": agent(
                "source: data/act.md\ndocument_domain: us_legislative\nmax_subsection_depth: 3\n"
                "extract_definitions: true\nextract_cross_references: false\n"
                "context_model: {provider: openai, name: gpt-4o-mini}\ncontext_max_tokens: 80\n"
                "enable_reranking: true\nreranker_model: openai/gpt-4o-mini\nrerank_candidates: 20"
            ),
        }
    )
    spec = load_agent(root)
    assert spec.warnings == ()


# --- the fixture written the shipped samples' way -----------------------------------------

FIXTURE = Path(__file__).resolve().parents[1] / "compat" / "legislation-retrieval"


def test_the_legislation_fixture_runs_offline_with_every_option_at_work(tmp_path: Path) -> None:
    """`holodeck test --model test` on the fixture: the definition entry (extract_definitions)
    comes first after reranking, inside its SEC. 2 section (document_domain), with the
    offline context line in front (context_model)."""
    root = tmp_path / "agent"
    shutil.copytree(FIXTURE, root)
    previous = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["test", str(root), "--model", "test", "-o", "run.json"])
    finally:
        os.chdir(previous)
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output.lower()
    data = json.loads((tmp_path / "run.json").read_text())
    definition_case = next(c for c in data["cases"] if c["name"] == "Find a definition")
    (call,) = definition_case["runs"][0]["turns"][0]["tool_calls"]
    first, *rest = call["result"]
    assert first["metadata"] == {"defined_term": "registered model"}
    assert first["matched_content"].startswith('From "Model Registry Act".\n\nDefinition of')
    assert first["heading_path"] == ["Model Registry Act", "SEC. 2. DEFINITIONS."]
    assert first["relevance_score"] == 1.0 and len(rest) == 2  # top_k 3 of 8 candidates


async def test_a_pdf_act_gets_its_sections_definitions_and_context_lines(write: Write) -> None:
    """The shipped legal sample's shape: a PDF act with a legislative domain."""
    lines = [
        line.replace("—", "-") for line in textwrap.dedent(ACT).strip().splitlines() if line.strip()
    ]
    root = write(
        {
            "agent.yaml": agent(
                "source: data/act.pdf\nsearch_mode: keyword\ntop_k: 1\n"
                "document_domain: us_legislative\nextract_definitions: true\n"
                "contextual_embeddings: true\ncontext_model: {provider: openai, name: gpt-4o-mini}"
            )
        }
    )
    (root / "data").mkdir()
    (root / "data/act.pdf").write_bytes(make_pdf([lines[:6], lines[6:]]))
    [update] = await search(root, "file an update within 30 days", OFFLINE)
    assert update.heading_path[-2] == "SEC. 4. DUTIES OF REGISTRANTS."
    assert update.heading_path[-1].startswith("(b) UPDATES.")
    assert update.matched_content.startswith('From "Model Registry Act".\n\n')  # offline line
    [term] = await search(root, 'definition of "registrant"', OFFLINE)
    assert term.metadata == {"defined_term": "registrant"}


async def test_context_concurrency_bounds_the_lines_requested_at_once(tmp_path: Path) -> None:
    class Writer:
        """Counts the requests it is answering at once."""

        name = "counting"

        def __init__(self) -> None:
            self.now = self.most = 0

        async def write(self, document: str, chunk: str) -> str:
            self.now += 1
            self.most = max(self.most, self.now)
            for _ in range(10):  # let every other request start that can
                await asyncio.sleep(0)
            self.now -= 1
            return "Line."

    (tmp_path / "doc.md").write_text("# Doc\n\ntext\n")
    chunks = [
        Chunk(f"doc.md#{n}", f"part {n}", "doc.md", n, hashlib.sha256(b"%d" % n).hexdigest())
        for n in range(6)
    ]
    writer = Writer()
    add = Contextualizer(writer, tmp_path, tmp_path / "contexts.db", concurrency=2)
    done = await add(SourceFile("doc.md", "hash"), chunks)
    assert writer.most == 2 and all(c.text.startswith("Line.\n\npart") for c in done)
