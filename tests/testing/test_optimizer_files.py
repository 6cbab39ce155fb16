"""Where `holodeck test optimize` writes its result (instructions in a file, an image
directory), and the shipped HoloDeck's `evaluations.optimizer` block read here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
import test_optimizer
from conftest import Write
from holodeck import load_agent
from scripted_servers import EmbeddingsServer
from test_optimizer import GOOD, PHRASE, QUESTIONS, USELESS, Scripted, agent_yaml, events, run

serve = test_optimizer.serve
embeddings_server = scripted_servers.embeddings_server
TEXTUAL = "  axes: {textual: [{path: instructions}]}\n  holdout: 0.34\n"


def test_instructions_in_a_file_go_to_a_new_file_with_their_front_matter(
    write: Write, tmp_path: Path, serve: Any
) -> None:
    server = serve(Scripted([lambda _: GOOD]))
    text = agent_yaml(server.url, TEXTUAL).replace(
        "instructions:\n  inline: You help customers.  # keep this comment\n",
        "instructions: {file: prompts/helpdesk.md}\n",
    )
    front = "---\nversion: 1.2.0\n---\n"
    root = write({"agent.yaml": text, "prompts/helpdesk.md": front + "You help customers.\n"})

    result = run(tmp_path, str(root / "agent.yaml"))

    assert result.exit_code == 0, result.output
    assert (root / "prompts/helpdesk.md").read_text() == front + "You help customers.\n"
    written = root / "prompts/helpdesk.optimized.md"
    assert written.read_text() == front + GOOD + "\n"
    optimized = load_agent(root / "agent.optimized.yaml")
    assert optimized.instructions_file == written.resolve()
    assert optimized.prompt_version is not None and optimized.prompt_version.version == "1.2.0"
    assert "+Always tell customers to write to" in result.output  # the instructions' diff


def image(root: Path, temperature: float) -> None:
    (root / "tests").mkdir(parents=True)
    (root / "config.yaml").write_text(
        "spec_version: 1\nname: helpdesk\n"
        f"llm: {{model: openai/gpt-4o-mini, temperature: {temperature}}}\n"
        "optimizer:\n"
        "  axes:\n"
        "    numeric: [{path: temperature, range: [0, 1]}]\n"
        "    textual: [{path: instructions}]\n"
        "  holdout: 0\n"
        "  max_cycles: 1\n"
        "  numeric_phase: {max_trials: 2, patience: 2}\n"
    )
    (root / "AGENTS.md").write_text("You help customers.\n")
    cases = [{"name": f"q{i}", "input": q, "ground_truth": PHRASE} for i, q in enumerate(QUESTIONS)]
    (root / "tests" / "cases.yaml").write_text(
        json.dumps({"evaluations": {"metrics": [{"metric": "contains"}]}, "test_cases": cases})
    )


def test_an_image_gets_agents_optimized_md_and_a_config_pointing_at_it(
    tmp_path: Path, serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def answer(body: dict[str, Any]) -> Any:
        """A low temperature answers half the questions; the good instructions all."""
        _, user = test_optimizer.system_and_user(body)
        easy = QUESTIONS.index(user) % 2 == 0 if user in QUESTIONS else False
        if easy and body.get("temperature", 1.0) <= 0.3:
            return test_optimizer.Reply(text=f"Write to {PHRASE}.")
        return script(body)

    script = Scripted([lambda _: GOOD])
    server = serve(answer)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    root = tmp_path / "helpdesk"
    image(root, 0.9)
    before = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}

    result = run(tmp_path, str(root))

    assert result.exit_code == 0, result.output
    assert {p.name: p.read_bytes() for p in root.iterdir() if p.name in before} == before
    done = [line for line in result.output.splitlines() if "stopped:" in line]
    assert done and "(6)" in result.output  # six train cases, none held out
    assert (root / "AGENTS.optimized.md").read_text() == GOOD + "\n"
    config = (root / "config.optimized.yaml").read_text()
    assert "instructions: AGENTS.optimized.md" in config and "temperature: 0.0" in config
    adopted = tmp_path / "adopted"  # the image with config.optimized.yaml as its config
    shutil.copytree(root, adopted)
    (adopted / "config.optimized.yaml").replace(adopted / "config.yaml")
    spec = load_agent(adopted)
    assert spec.instructions == GOOD + "\n" and spec.model is not None
    assert spec.model.temperature == 0.0


def test_a_packed_image_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "helpdesk.tar.gz"
    archive.write_bytes(b"")
    result = run(tmp_path, str(archive))
    assert result.exit_code == 2 and "unpack it first" in result.output


def test_the_shipped_holodecks_block_under_evaluations_is_read(
    write: Write, tmp_path: Path, serve: Any
) -> None:
    server = serve(Scripted([lambda _: USELESS]))
    text = agent_yaml(server.url, "").replace("optimizer:\n", "")
    text = text.replace(
        "  metrics: [{metric: contains}]\n",
        "  metrics: [{metric: contains}]\n"
        "  optimizer:\n"
        "    loss: {contains: 1.0}\n"
        "    axes:\n"
        "      numeric:\n"
        "        - {path: claude.max_turns, type: int, range: [1, 5]}\n"
        "        - {path: model.temperature, type: float, range: [0.0, 1.0]}\n"
        "    max_cycles: 1\n"
        "    numeric_phase: {max_trials: 1, patience: 1}\n",
    )
    root = write({"agent.yaml": text})
    lines = text.splitlines()
    claude = next(n for n, line in enumerate(lines, start=1) if "claude.max_turns" in line)

    result = run(tmp_path, str(root / "agent.yaml"), "--progress", "ndjson")

    assert result.exit_code == 0, result.output
    assert f"agent.yaml:{claude}:" in result.stderr and "ignored: the axis" in result.stderr
    got = events(result)
    started = [e["settings"] for e in got if e["event"] == "candidate_started"]
    assert started == [{"model.temperature": None}, {"model.temperature": 1.0}]

    strict = run(tmp_path, str(root / "agent.yaml"), "--strict")
    assert strict.exit_code == 2 and f"agent.yaml:{claude}:" in strict.output
    assert "tunes nothing" in strict.output


def test_a_bad_axis_after_a_dropped_one_is_reported_at_its_own_line(
    write: Write, tmp_path: Path
) -> None:
    optimizer = (
        "  axes:\n    numeric:\n"
        "      - {path: tool_filtering.top_k, range: [1, 5]}\n"
        "      - {path: temperature, range: [0.9, 0.1]}\n"
    )
    root = write({"agent.yaml": agent_yaml("http://127.0.0.1:9/v1", optimizer)})
    lines = (root / "agent.yaml").read_text().splitlines()
    bad = next(n for n, line in enumerate(lines, start=1) if "[0.9, 0.1]" in line)
    result = run(tmp_path, str(root / "agent.yaml"))
    assert result.exit_code == 2
    assert f"agent.yaml:{bad}:" in result.output and "min 0.9 > max 0.1" in result.output


DOCS = {
    f"data/docs/{name}.md": f"# {name}\n\nParcels, returns and refunds: see {name}.\n"
    for name in ("shipping", "returns", "refunds", "invoices")
}


def test_a_search_tools_top_k_is_searched_and_written_back(
    write: Write, tmp_path: Path, serve: Any, embeddings_server: EmbeddingsServer
) -> None:
    def answer(body: dict[str, Any]) -> Any:
        """Calls the search tool, then answers well only with three results or more."""
        last = body["messages"][-1]
        if last["role"] != "tool":
            _, user = test_optimizer.system_and_user(body)
            return test_optimizer.Reply(calls=(test_optimizer.Call("docs", {"query": user}),))
        found = json.loads(last["content"])
        return test_optimizer.Reply(text=f"Write to {PHRASE}." if len(found) >= 3 else "Hmm.")

    server = serve(answer)
    optimizer = "  axes:\n    numeric: [{path: 'tools[name=docs].top_k', range: [1, 5]}]\n"
    text = agent_yaml(server.url, optimizer).replace(
        "evaluations:",
        "embedding_provider: {provider: openai, name: text-embedding-3-small, "
        f"endpoint: {embeddings_server.url}, api_key: sk-test}}\n"
        "tools:\n"
        "  - {type: vectorstore, name: docs, description: Help pages., source: data/docs,"
        " top_k: 1}\n"
        "evaluations:",
    )
    root = write({"agent.yaml": text, **DOCS})

    result = run(tmp_path, str(root / "agent.yaml"), "--budget-candidates", "3")

    assert result.exit_code == 0, result.output
    (tool,) = load_agent(root / "agent.optimized.yaml").tools
    assert getattr(tool, "top_k", None) == 5
    assert "top_k: 1}" in (root / "agent.yaml").read_text()


def test_a_tool_the_agent_does_not_have_is_refused(write: Write, tmp_path: Path) -> None:
    optimizer = "  axes:\n    numeric: [{path: 'tools[name=kb].top_k', range: [1, 5]}]\n"
    root = write({"agent.yaml": agent_yaml("http://127.0.0.1:9/v1", optimizer)})
    result = run(tmp_path, str(root / "agent.yaml"))
    assert result.exit_code == 2
    assert "`tools[name=kb].top_k` names no search tool of this agent" in result.output
