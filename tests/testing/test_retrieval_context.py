"""The judged metrics' retrieval context: by default what the agent's own tool calls returned
(function and MCP tools alike), turn by turn in call order, failed calls left out; a test
case's `retrieval_context` replaces it. The judge is the scripted server over real HTTP."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

import scripted_servers
from conftest import Write
from holodeck.cli.main import cli
from holodeck.testing.metrics.judge import JUDGE_TOOL
from scripted_servers import Call, OpenAIServer, text, tool_calls

openai_server = scripted_servers.openai_server

DEMO_MCP = Path(__file__).resolve().parents[1] / "mcp_servers" / "demo.py"
TOOLS = """
def order_status(order_id: str) -> dict:
    return {"order": order_id, "status": "shipped", "carrier": "Nordpost"}

def broken() -> str:
    raise RuntimeError("the warehouse is offline")
"""


def agent(write: Write, server: OpenAIServer, cases: str) -> Path:
    return write(
        {
            "agent.yaml": f"""
name: desk
model: {{provider: openai, name: gpt-4o, endpoint: "{server.url}", api_key: sk-test}}
instructions: {{inline: Answer from the tools.}}
tools:
  - {{type: function, name: order_status, file: tools.py, function: order_status}}
  - {{type: function, name: broken, file: tools.py, function: broken}}
evaluations:
  metrics: [{{metric: groundedness, threshold: 3, fail_on_error: true}}]
test_cases:
{cases}""",
            "tools.py": TOOLS,
        }
    )


def run_test(root: Path, cwd: Path) -> dict[str, Any]:
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, ["test", str(root), "--concurrency", "1", "-o", "r.json"])
    finally:
        os.chdir(previous)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads((cwd / "r.json").read_text(encoding="utf-8"))
    return data


def judge_context(server: OpenAIServer) -> str:
    """The <context> the judge was shown (the last request is the judge's)."""
    body = server.requests[-1].body
    assert [t["function"]["name"] for t in body["tools"]] == [JUDGE_TOOL]
    (user,) = [m["content"] for m in body["messages"] if m["role"] == "user"]
    assert isinstance(user, str)
    return user.split("<context>\n", 1)[1].split("\n</context>", 1)[0]


def verdict(score: int) -> Any:
    return tool_calls(Call(JUDGE_TOOL, {"reason": "Stated by the tool.", "score": score}))


def test_groundedness_is_judged_against_a_function_tools_result(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    root = agent(write, openai_server, "  - {name: where, input: Where is order 42?}\n")
    openai_server.script(
        tool_calls(Call("order_status", {"order_id": "42"})),
        text("Order 42 has shipped with Nordpost."),
        verdict(5),
    )
    data = run_test(root, tmp_path)
    result = json.dumps({"order": "42", "status": "shipped", "carrier": "Nordpost"})
    assert judge_context(openai_server) == f"[1] {result}"
    (attempt,) = data["cases"][0]["runs"]
    assert attempt["retrieval_context"] == [result]
    (groundedness,) = attempt["metrics"]
    assert (groundedness["status"], groundedness["score"], groundedness["judged"]) == (
        "pass",
        5.0,
        True,
    )


def test_every_turns_results_in_call_order_and_failed_calls_left_out(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    cases = """\
  - name: two-turns
    turns:
      - {input: Where are orders 1 and 2?}
      - {input: And order 3?}
"""
    root = agent(write, openai_server, cases)
    openai_server.script(
        tool_calls(
            Call("order_status", {"order_id": "1"}),
            Call("broken"),
            Call("order_status", {"order_id": "2"}),
        ),
        text("Both shipped."),
        tool_calls(Call("order_status", {"order_id": "3"})),
        text("Order 3 shipped too."),
        verdict(4),
    )
    data = run_test(root, tmp_path)
    chunks = [json.dumps({"order": n, "status": "shipped", "carrier": "Nordpost"}) for n in "123"]
    assert judge_context(openai_server) == "\n\n".join(
        f"[{i}] {chunk}" for i, chunk in enumerate(chunks, start=1)
    )
    assert data["cases"][0]["runs"][0]["retrieval_context"] == chunks
    calls = [c for t in data["cases"][0]["runs"][0]["turns"] for c in t["tool_calls"]]
    assert "warehouse is offline" in (calls[1]["error"] or "")


def test_a_cases_own_retrieval_context_wins_over_the_tools(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    cases = """\
  - name: given
    input: Where is order 42?
    retrieval_context: ["Order 42 left the depot on Monday."]
"""
    root = agent(write, openai_server, cases)
    openai_server.script(
        tool_calls(Call("order_status", {"order_id": "42"})),
        text("It left on Monday."),
        verdict(5),
    )
    data = run_test(root, tmp_path)
    assert judge_context(openai_server) == "[1] Order 42 left the depot on Monday."
    assert data["cases"][0]["runs"][0]["retrieval_context"] == [
        "Order 42 left the depot on Monday."
    ]


def test_an_mcp_tools_result_is_the_context_in_an_offline_run(write: Write, tmp_path: Path) -> None:
    """Offline: the judge prompt (kept, though not judged) holds what the MCP tool said."""
    server = {"type": "mcp", "name": "demo", "command": sys.executable, "args": [str(DEMO_MCP)]}
    root = write(
        {
            "agent.yaml": f"""
name: museum
model: {{provider: test}}
instructions: {{inline: Answer from the tools.}}
tools:
  - {json.dumps(server)}
evaluations:
  metrics: [groundedness]
test_cases:
  - name: hours
    input: When does the museum open?
    expected_tools: [{{name: demo_echo, args: {{text: The museum opens at 9.}}}}]
""",
        }
    )
    data = run_test(root, tmp_path)
    (attempt,) = data["cases"][0]["runs"]
    assert attempt["retrieval_context"] == ["The museum opens at 9."]
    (groundedness,) = attempt["metrics"]
    assert groundedness["judged"] is False and groundedness["status"] == "pass"
    assert "<context>\n[1] The museum opens at 9.\n</context>" in groundedness["judge_prompt"]
