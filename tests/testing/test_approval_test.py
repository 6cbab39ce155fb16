"""Human approval in `holodeck test`: a case approves (`approve: [tool]`) or denies
(`deny: [tool]`) the calls that wait for approval, and checks what the agent did then.
The offline `test` model calls the case's expected tools and answers from the results
(a denied call: with the reason it was denied)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Write
from test_test_command import run

AGENT = """
name: shop
model: {provider: openai, name: gpt-4o-mini}
instructions: {inline: You manage orders.}
tools:
  - {type: function, name: delete_order, file: tools.py, function: delete_order}
  - {type: function, name: lookup, file: tools.py, function: lookup}
approval:
  require: [delete_*]
test_cases:
"""
TOOLS = '''
from pathlib import Path

def delete_order(order_id: str) -> str:
    """Delete an order."""
    with Path(__file__).with_name("deleted").open("a") as log:
        log.write(order_id + "\\n")
    return f"order {order_id} deleted"

def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} shipped"
'''
APPROVED = """
  - name: approved
    input: Delete order 42
    expected_tools: [{name: delete_order, args: {order_id: "42"}}]
    approve: [delete_order]
    ground_truth: order 42 deleted
    evaluations: [{metric: f1_score, threshold: 0.9}]
"""
DENIED = """
  - name: denied
    input: Delete order 7
    expected_tools: [delete_order]
    deny: [delete_order]
    ground_truth: delete_order was not run The test case denies this tool call
    evaluations: [{metric: f1_score, threshold: 0.9}]
"""
UNDECIDED = """
  - name: undecided
    input: Delete order 9
    expected_tools: [delete_order]
"""


def cases(run_json: Path) -> dict[str, dict[str, object]]:
    data = json.loads(run_json.read_text())
    return {case["name"]: case["runs"][0] for case in data["cases"]}


def test_cases_approve_or_deny_and_check_what_the_agent_did_after(
    write: Write, tmp_path: Path
) -> None:
    root = write({"agent.yaml": AGENT + APPROVED + DENIED, "tools.py": TOOLS})

    result = run("test", str(root), "--model", "test", "-o", "run.json", cwd=tmp_path)

    assert result.exit_code == 0, result.output
    runs = cases(tmp_path / "run.json")
    (approved,) = runs["approved"]["turns"]  # type: ignore[index]
    assert approved["tool_calls"][0]["result"] == "order 42 deleted"
    assert approved["tool_calls"][0]["error"] is None
    assert approved["output"] == "order 42 deleted"
    (denied,) = runs["denied"]["turns"]  # type: ignore[index]
    assert denied["tool_calls"][0]["name"] == "delete_order"
    assert denied["tool_calls"][0]["error"] == "denied: The test case denies this tool call."
    assert denied["output"] == "delete_order was not run: The test case denies this tool call."
    assert (root / "deleted").read_text().split() == ["42"]  # the denied call never ran


def test_a_call_the_case_does_not_decide_is_an_error_naming_it(
    write: Write, tmp_path: Path
) -> None:
    root = write({"agent.yaml": AGENT + UNDECIDED, "tools.py": TOOLS})

    result = run("test", str(root), "--model", "test", "-o", "run.json", cwd=tmp_path)

    assert result.exit_code == 3, result.output  # a case in ERROR
    undecided = cases(tmp_path / "run.json")["undecided"]
    assert undecided["status"] == "error"
    assert "delete_order waits for approval" in str(undecided["error"])
    assert "approve: [delete_order]" in str(undecided["error"])
    assert not (root / "deleted").exists()


def test_validate_names_an_unknown_tool_to_approve_and_a_pattern_that_matches_nothing(
    write: Write, tmp_path: Path
) -> None:
    agent = AGENT.replace("[delete_*]", "[delete_*, refund_*]")
    case = "  - {input: hi, approve: [refund]}\n"
    root = write({"agent.yaml": agent + case, "tools.py": TOOLS})

    result = run("validate", str(root), cwd=tmp_path)

    assert result.exit_code == 2, result.output
    assert "tool to approve `refund` is not one of the agent's tools" in result.output
    lines = [line for line in result.output.splitlines() if "refund_*" in line]
    assert lines and "agent.yaml:8" in lines[0]  # the pattern's own line
    assert "matches none of the agent's tools" in lines[0]
