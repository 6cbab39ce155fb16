"""Per-call guards on the surfaces: `holodeck test` cases approve or deny the calls a
policy asks about and report a call the rules denied as denied; a real `holodeck deploy`
pauses on a policy's ASK until `/v1/sessions/{id}/approvals/{call}` decides it, and its
SSE stream shows a denied call as a finished call with `denied: <reason>`. The model is
the offline `test` model, or a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2 as httpx

import scripted_servers
from cli_invoke import invoke
from conftest import Write
from scripted_servers import Call, OpenAIServer, text, tool_calls
from server_harness import deploy_process, parse_sse

openai_server = scripted_servers.openai_server

TOOLS = '''
from pathlib import Path

def delete_order(order_id: str) -> str:
    """Delete an order."""
    with Path(__file__).with_name("deleted").open("a") as log:
        log.write(order_id + "\\n")
    return f"order {order_id} deleted"
'''
POLICIES = '''
def guard(ask_above):
    """Orders above `ask_above` need a person; order 0 is never deleted."""
    def check(event):
        order = int(event["data"]["arguments"].get("order_id", "0"))
        if order == 0:
            return {"result": "DENY", "reason": "order 0 is the template"}
        return {"result": "ASK"} if order > ask_above else None
    return check
'''
GUARDS = """
tool_policies:
  - {name: big_orders, callable: "policies.py:guard", factory_params: {ask_above: 100}}
"""
CASES = """
test_cases:
  - name: approved
    input: Delete order 500
    expected_tools: [{name: delete_order, args: {order_id: "500"}}]
    approve: [delete_order]
    ground_truth: order 500 deleted
    evaluations: [{metric: f1_score, threshold: 0.9}]
  - name: denied
    input: Delete order 700
    expected_tools: [{name: delete_order, args: {order_id: "700"}}]
    deny: [delete_order]
  - name: refused
    input: Delete order 0
    expected_tools: [{name: delete_order, args: {order_id: "0"}}]
  - name: small
    input: Delete order 5
    expected_tools: [{name: delete_order, args: {order_id: "5"}}]
"""


def agent_yaml(model: str, extra: str = "") -> str:
    return (
        f"name: shop\nmodel: {model}\ninstructions: {{inline: You manage orders.}}\n"
        "tools:\n  - {type: function, name: delete_order, file: tools.py, "
        "function: delete_order}\nexecution: {max_retries: 0}\n" + GUARDS + extra
    )


def test_cases_decide_what_a_policy_asks_and_see_what_it_denied(
    write: Write, tmp_path: Path
) -> None:
    root = write(
        {
            "agent.yaml": agent_yaml("{provider: openai, name: gpt-4o-mini}", CASES),
            "tools.py": TOOLS,
            "policies.py": POLICIES,
        }
    )

    result = invoke("test", str(root), "--model", "test", "-o", "run.json", cwd=tmp_path)

    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "run.json").read_text())
    turns = {case["name"]: case["runs"][0]["turns"][0] for case in data["cases"]}
    assert turns["approved"]["tool_calls"][0]["error"] is None
    assert turns["approved"]["output"] == "order 500 deleted"
    assert turns["denied"]["tool_calls"][0]["error"] == (
        "denied: The test case denies this tool call."
    )
    refused = turns["refused"]["tool_calls"][0]
    assert refused["error"] == "denied: big_orders: order 0 is the template"
    assert turns["refused"]["output"] == "This call was not run: order 0 is the template"
    assert turns["small"]["tool_calls"][0]["error"] is None
    assert (root / "deleted").read_text().split() == ["500", "5"]  # 700 and 0 never ran


def test_a_served_agent_pauses_on_a_policys_ask_and_streams_a_denied_call(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    model = (
        f"{{provider: openai, name: gpt-4o-mini, endpoint: '{openai_server.url}', api_key: sk-x}}"
    )
    root = write({"agent.yaml": agent_yaml(model), "tools.py": TOOLS, "policies.py": POLICIES})
    openai_server.script(
        tool_calls(Call("delete_order", {"order_id": "500"}, id="c_big")),
        text("Order 500 is deleted."),
        tool_calls(Call("delete_order", {"order_id": "0"}, id="c_zero")),
        text("I may not delete order 0."),
    )

    with (
        deploy_process(str(root), cwd=tmp_path) as (_, url),
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        paused = client.post("/v1/chat", json={"message": "delete order 500", "session_id": "s1"})
        ran_before = (root / "deleted").exists()
        resumed = client.post("/v1/sessions/s1/approvals/c_big", json={"approve": True})
        body = {"message": "delete order 0", "session_id": "s2", "stream": True}
        with client.stream("POST", "/v1/chat", json=body) as response:
            assert response.status_code == 200, response.read()
            events = parse_sse(response.iter_lines())

    assert paused.status_code == 200, paused.text
    assert [c["id"] for c in paused.json()["pending"]] == ["c_big"] and not ran_before
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["response"] == "Order 500 is deleted."
    assert (root / "deleted").read_text().split() == ["500"]  # order 0 never ran
    finished: list[dict[str, Any]] = [d for n, d in events if n == "tool_call_finished"]
    assert finished[0]["name"] == "delete_order"
    assert finished[0]["error"] == "denied: big_orders: order 0 is the template"
    assert events[-1][1]["response"] == "I may not delete order 0."
    told = openai_server.requests[-1].body["messages"][-1]
    assert told["role"] == "tool" and "order 0 is the template" in told["content"]
