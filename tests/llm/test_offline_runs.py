"""Offline smoke runs (`--model test`, or an agent on the `test` provider): answer metrics
are computed and shown as not judged and never fail a case, while tool checks still do;
the judges reach no provider. A replayed cassette and a real model are judged as usual.
The offline model calls only the tools a case expects (or a message asks for with
`/call`), with arguments taken from the user's words."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
from conftest import PROVIDER_VARS, Write
from holodeck.scaffold import FORMATS, TEMPLATES
from scripted_servers import Call, OpenAIServer, text, tool_calls

openai_server = scripted_servers.openai_server

NOTE = "Answer metrics were not judged"
TOOLS = """
def order_status(order_id: str) -> dict:
    return {"order": order_id, "status": "shipped"}
"""


def holodeck(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed command in a fresh process, with no provider key in its environment."""
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARS}
    return subprocess.run(
        [sys.executable, "-m", "holodeck", *args],
        cwd=cwd,
        env={**env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def report(cwd: Path, name: str = "r.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((cwd / name).read_text(encoding="utf-8"))
    return data


def metrics_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for c in data["cases"] for r in c["runs"] for m in r["metrics"]]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("template", TEMPLATES)
def test_every_template_passes_its_offline_smoke_run_without_a_key(
    template: str, fmt: str, tmp_path: Path
) -> None:
    made = holodeck("init", "smoke", "--template", template, "--format", fmt, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    ran = holodeck("test", "smoke", "--model", "test", "-o", "r.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "not judged" in ran.stdout and "judge:" not in ran.stdout  # no judge was refused
    assert ran.stdout.count(NOTE) == 1 and "--replay" in ran.stdout
    data = report(tmp_path)
    assert data["offline"] is True
    metrics = metrics_of(data)
    assert metrics and not any(m["judged"] for m in metrics)
    assert {m["kind"] for m in metrics} >= {"nlp", "ai"}  # the templates' F1 and relevance


def test_a_failing_tool_check_still_fails_an_offline_run(write: Write, tmp_path: Path) -> None:
    root = write(
        {
            "agent.yaml": """
name: shop
model: {provider: test}
instructions: {inline: Help customers.}
tools:
  - {type: function, name: order_status, file: tools.py, function: order_status}
evaluations:
  metrics: [{metric: f1_score, threshold: 0.99}, {metric: relevance, threshold: 5}]
test_cases:
  - name: twice
    input: Where is order 7?
    ground_truth: Order 7 was delivered yesterday to the front desk.
    expected_tools: [{name: order_status, count: 2}]
""",
            "tools.py": TOOLS,
        }
    )
    ran = holodeck("test", str(root), "-o", "r.json", cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "order_status: 1 call, expected 2" in ran.stdout
    (case,) = report(tmp_path)["cases"]
    (attempt,) = case["runs"]
    assert attempt["tool_check"]["passed"] is False
    assert [(m["name"], m["judged"], m["fails_case"]) for m in attempt["metrics"]] == [
        ("f1_score", False, False),
        ("relevance", False, False),
    ]


def test_judges_named_by_an_offline_agents_metrics_are_not_asked(
    write: Write, tmp_path: Path
) -> None:
    """An agent on the `test` provider whose judge is OpenAI: no key is needed, because an
    offline run's judges are the offline model too."""
    root = write(
        {
            "agent.yaml": """
name: shop
model: {provider: test}
instructions: {inline: Help customers.}
tools:
  - {type: function, name: order_status, file: tools.py, function: order_status}
evaluations:
  model: {provider: openai, name: gpt-4o}
  metrics:
    - {metric: groundedness, threshold: 4, fail_on_error: true}
    - {type: geval, name: Polite, criteria: The answer is polite., threshold: 0.9}
test_cases:
  - {name: where, input: Where is order 7?, expected_tools: [order_status]}
""",
            "tools.py": TOOLS,
        }
    )
    ran = holodeck("test", str(root), "-o", "r.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "OPENAI_API_KEY" not in ran.stdout + ran.stderr
    metrics = metrics_of(report(tmp_path))
    assert [(m["name"], m["status"], m["judged"]) for m in metrics] == [
        ("groundedness", "pass", False),
        ("Polite", "pass", False),
    ]


def test_a_real_model_with_the_offline_judge_is_not_judged(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    root = write(
        {
            "agent.yaml": f"""
name: shop
model: {{provider: openai, name: gpt-4o, endpoint: "{openai_server.url}", api_key: sk-test}}
instructions: {{inline: Help customers.}}
evaluations:
  model: {{provider: test}}
  metrics: [{{metric: relevance, threshold: 3}}, {{metric: f1_score, threshold: 0.5}}]
test_cases:
  - {{name: hi, input: Hello?, ground_truth: Hello! How can I help?}}
""",
        }
    )
    openai_server.script(text("Hello! How can I help?"))
    ran = holodeck("test", str(root), "-o", "r.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 metric result not judged: the judge is the offline `test` model" in ran.stdout
    data = report(tmp_path)
    assert data["offline"] is False
    relevance, f1 = metrics_of(data)
    assert (relevance["judged"], f1["judged"], f1["status"]) == (False, True, "pass")


def test_a_replayed_run_is_judged_and_fails_on_a_bad_metric(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    """A cassette holds a real model's answers: replayed without the model, a wrong answer
    still fails its metric (exit 1), while the same answer from an offline run would not."""
    root = write(
        {
            "agent.yaml": f"""
name: shop
model: {{provider: openai, name: gpt-4o, endpoint: "{openai_server.url}", api_key: sk-test}}
instructions: {{inline: Help customers.}}
tools:
  - {{type: function, name: order_status, file: tools.py, function: order_status}}
evaluations:
  metrics: [{{metric: f1_score, threshold: 0.8}}]
test_cases:
  - name: where
    input: Where is order 7?
    ground_truth: Order 7 has shipped.
    expected_tools: [order_status]
""",
            "tools.py": TOOLS,
        }
    )
    openai_server.script(
        tool_calls(Call("order_status", {"order_id": "7"})), text("I cannot say, sorry.")
    )
    cassette = tmp_path / "ci.yaml"
    recorded = holodeck("test", str(root), "--record", str(cassette), cwd=tmp_path)
    assert recorded.returncode == 1, recorded.stdout + recorded.stderr
    openai_server.stop()  # the replay never reaches the model
    replayed = holodeck("test", str(root), "--replay", str(cassette), "-o", "r.json", cwd=tmp_path)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "F1: 0.00 ✗ (threshold 0.80)" in replayed.stdout and NOTE not in replayed.stdout
    data = report(tmp_path)
    assert data["offline"] is False
    (f1,) = metrics_of(data)
    assert (f1["status"], f1["judged"], f1["fails_case"]) == ("fail", True, True)


def test_every_report_format_marks_unjudged_metrics(write: Write, tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    root = write(
        {
            "agent.yaml": """
name: shop
model: {provider: openai, name: gpt-4o}
instructions: {inline: Help customers.}
tools:
  - {type: function, name: order_status, file: tools.py, function: order_status}
evaluations:
  metrics: [{metric: f1_score, threshold: 0.99}, {metric: similarity}]
test_cases:
  - name: where
    input: Where is order 7?
    ground_truth: Order 7 was delivered yesterday.
    expected_tools: [order_status]
""",
            "tools.py": TOOLS,
        }
    )
    for name in ("r.json", "r.md", "r.html", "r.junit.xml"):
        ran = holodeck("test", str(root), "--model", "test", "-v", "-o", name, cwd=tmp_path)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        # -v: each metric marked, the stand-in judge said so, the prompt shown
        assert "F1: 0.44 not judged (threshold 0.99)" in ran.stdout
        assert "Similarity: 5.0/5.0 not judged" in ran.stdout
        assert "the offline `test` model stood in for the judge" in ran.stdout
        assert "judge prompt:" in ran.stdout and ran.stdout.count(NOTE) == 1
    metrics = metrics_of(report(tmp_path))
    assert [(m["status"], m["judged"], m["fails_case"]) for m in metrics] == [
        ("fail", False, False),  # what the threshold would say of a canned answer
        ("pass", False, False),
    ]
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "> **Not judged**: Answer metrics were not judged" in markdown
    assert "| F1 | 0.44 | 0.99 | not judged |" in markdown
    assert "| Model | test (offline: answers not judged) |" in markdown
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert html.count('class="badge unjudged"') == 2 and "✗ FAIL" not in html
    assert '<div class="banner unjudged" role="note"><strong>Not judged.</strong>' in html
    suite = ET.parse(tmp_path / "r.junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0"
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["offline"] == "true"
    assert (properties["not_judged"] or "").startswith(NOTE)
    assert properties["where :: f1_score"] == "F1: 0.44 not judged (threshold 0.99)"


def test_a_case_that_cannot_run_is_still_an_error_offline(write: Write, tmp_path: Path) -> None:
    root = write(
        {
            "agent.yaml": """
name: shop
model: {provider: test}
instructions: {inline: Help customers.}
evaluations:
  metrics: [f1_score]
test_cases:
  - name: photo
    input: What is in this picture?
    ground_truth: A parcel.
    files: [{path: parcel.png, type: image}]
""",
            "parcel.png": "not really a picture",
        }
    )
    ran = holodeck("test", str(root), cwd=tmp_path)
    assert ran.returncode == 3, ran.stdout + ran.stderr  # the agent takes no image input
    assert "does not accept image input" in ran.stdout


def test_a_case_steers_the_offline_agent_and_its_sub_agent_calls_nothing_unasked(
    write: Write, tmp_path: Path
) -> None:
    """The case's `expected_tools` choose what the agent under test calls (not `note`);
    the sub-agent it calls was asked for no tool, so it calls none (not `lookup`)."""
    root = write(
        {
            "config.yaml": "spec_version: 1\nname: desk\nllm: {model: openai/gpt-4o}\n"
            "tools: {agents: [researcher]}\n",
            "tools/python/note.py": "def note(text: str) -> str:\n    return 'noted'\n",
            "agents/researcher/config.yaml": "spec_version: 1\ndescription: Finds facts.\n"
            "llm: {model: openai/gpt-4o}\n",
            "agents/researcher/tools/python/lookup.py": "def lookup(topic: str) -> str:\n"
            "    return 'fact about ' + topic\n",
            "tests/cases.yaml": "test_cases:\n"
            "  - {name: ask, input: Find a fact, expected_tools: [researcher]}\n",
        }
    )
    ran = holodeck("test", str(root), "--model", "test", "-o", "r.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (case,) = report(tmp_path)["cases"]
    (attempt,) = case["runs"]
    calls = [(c["agent"], c["name"]) for t in attempt["turns"] for c in t["tool_calls"]]
    assert calls == [("", "researcher")]
    assert attempt["tool_check"]["passed"] is True


WRITING_TOOLS = """
from pathlib import Path

def order_status(order_id: str) -> dict:
    return {"order": order_id, "status": "shipped"}

def save_note(text: str) -> str:
    (Path(__file__).parent / "note.txt").write_text(text)
    return "saved"
"""


def test_an_offline_run_calls_only_the_tools_a_case_expects(write: Write, tmp_path: Path) -> None:
    """A case without `expected_tools` calls nothing: `save_note`, which writes into the
    agent's folder, runs in no case; the order number comes from the question."""
    root = write(
        {
            "agent.yaml": """
name: shop
model: {provider: openai, name: gpt-4o}
instructions: {inline: Help customers.}
tools:
  - {type: function, name: order_status, file: tools.py, function: order_status}
  - {type: function, name: save_note, file: tools.py, function: save_note}
test_cases:
  - {name: hello, input: Hello there}
  - {name: where, input: Where is order 42?, expected_tools: [order_status]}
""",
            "tools.py": WRITING_TOOLS,
        }
    )
    ran = holodeck("test", str(root), "--model", "test", "-o", "r.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    hello, where = report(tmp_path)["cases"]
    assert [t["tool_calls"] for t in hello["runs"][0]["turns"]] == [[]]
    assert hello["runs"][0]["turns"][0]["output"] == "Test answer to: Hello there"
    (call,) = where["runs"][0]["turns"][0]["tool_calls"]
    assert (call["name"], call["args"], call["result"]) == (
        "order_status",
        {"order_id": "42"},
        {"order": "42", "status": "shipped"},
    )
    assert not (root / "note.txt").exists()


def test_a_case_expecting_get_weather_for_oslo_calls_it_with_city_oslo(tmp_path: Path) -> None:
    """The weather example, with a case that names the tool but not its arguments."""
    example = tmp_path / "weather"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "weather", example)
    definition = example / "agent.yaml"
    text = definition.read_text(encoding="utf-8")
    definition.write_text(
        text[: text.index("test_cases:")] + "test_cases:\n"
        "  - name: oslo\n"
        "    input: What's the weather in Oslo?\n"
        "    expected_tools: [get_weather]\n"
        "  - name: given\n"
        "    input: How warm is it in Tokyo?\n"
        "    expected_tools: [{name: get_weather, args: {city: Lisbon}}]\n",
        encoding="utf-8",
    )
    ran = holodeck("test", str(example), "--model", "test", "-o", "r.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    oslo, given = (c["runs"][0]["turns"][0] for c in report(tmp_path)["cases"])
    (call,) = oslo["tool_calls"]
    assert call["args"]["city"] == "Oslo"
    assert call["result"] == {"city": "Oslo", "temperature": "6 °C", "conditions": "overcast"}
    assert oslo["output"] == "city Oslo, temperature 6 °C, conditions overcast"
    (call,) = given["tool_calls"]
    assert call["args"]["city"] == "Lisbon"  # the value a case gives wins over the words


NOTES_SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "notes.py"


def test_a_destructive_mcp_tool_is_called_only_when_a_case_names_it(
    write: Write, tmp_path: Path
) -> None:
    """`/call` in the words of a question calls a read-only MCP tool, not one whose server
    marks it destructive; a case whose expected_tools name it does call it."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.note").write_text("buy milk", encoding="utf-8")
    server = f'{{type: mcp, name: notes, command: "{sys.executable}", args: ["{NOTES_SERVER}", "{notes}"]}}'
    root = write(
        {
            "agent.yaml": """
name: keeper
model: {provider: test}
instructions: {inline: Keep notes.}
tools:
  - SERVER
test_cases:
  - name: asked
    input: 'Read the todo note /call notes_read_note {"name": "todo"} and /call notes_delete_note'
  - name: scripted
    input: Forget the todo note
    expected_tools: [{name: notes_delete_note, args: {name: todo}}]
""".replace("SERVER", server),
        }
    )
    ran = holodeck("test", str(root), "-o", "r.json", "--concurrency", "1", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    asked, scripted = (c["runs"][0]["turns"][0] for c in report(tmp_path)["cases"])
    assert [c["name"] for c in asked["tool_calls"]] == ["notes_read_note"]
    assert "buy milk" in asked["output"]
    assert (
        "/call notes_delete_note: not called, its MCP server marks it destructive"
        in (asked["output"])
    )
    assert [(c["name"], c["result"]) for c in scripted["tool_calls"]] == [
        ("notes_delete_note", "deleted todo")
    ]
    assert not (notes / "todo.note").exists()
