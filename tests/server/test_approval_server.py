"""Human approval on a served agent: a turn that calls a tool needing approval pauses
(`pending` in the answer, an `approval_required` event on a stream), and
`POST /v1/sessions/{id}/approvals/{call_id}` decides it; the last decision resumes the
turn. The model is a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx2 as httpx

import scripted_servers
from scripted_servers import Call, OpenAIServer, text, tool_calls
from server_harness import Serve, deploy_process, log_lines, parse_sse
from yaml_dump import dump

openai_server = scripted_servers.openai_server

DELETE_TOOL = """
from pathlib import Path

def delete_order(order_id: str) -> str:
    '''Deletes an order.'''
    Path(__file__).with_name("deleted").write_text(order_id)
    return f"order {order_id} deleted"

def lookup(order_id: str) -> str:
    '''Looks an order up.'''
    return f"order {order_id}: shipped"
"""


def shop(root: Path, server: OpenAIServer, **extra: Any) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    spec = {
        "name": "shop",
        "model": {
            "provider": "openai",
            "name": "gpt-4o-mini",
            "endpoint": server.url,
            "api_key": "sk-x",
        },
        "instructions": {"inline": "You manage orders."},
        "tools": [
            {
                "type": "function",
                "name": "delete_order",
                "file": "tools.py",
                "function": "delete_order",
                "approval": "required",
            },
            {"type": "function", "name": "lookup", "file": "tools.py", "function": "lookup"},
        ],
        "execution": {"max_retries": 0},
        **extra,
    }
    (root / "agent.yaml").write_text(dump(spec), encoding="utf-8")
    (root / "tools.py").write_text(DELETE_TOOL, encoding="utf-8")
    return root


def deleting(order_id: str = "42", call_id: str = "call_del") -> Any:
    return tool_calls(Call("delete_order", {"order_id": order_id}, id=call_id))


def test_a_served_turn_pauses_and_survives_a_restart_before_its_decision(
    tmp_path: Path, openai_server: OpenAIServer, isolated_home: Path
) -> None:
    root = shop(tmp_path / "shop", openai_server, memory={"store": "sqlite"})
    openai_server.script(deleting(), text("Order 42 is deleted."))
    env = {"HOLODECK_HOME": os.environ["HOLODECK_HOME"]}

    with (
        deploy_process(str(root), env=env, cwd=tmp_path) as (_, url),
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        paused = client.post("/v1/chat", json={"message": "delete order 42", "session_id": "s1"})
        refused = client.post("/v1/chat", json={"message": "and order 43?", "session_id": "s1"})
    assert not (root / "deleted").exists()  # the call waits: the tool has not run

    with (
        deploy_process(str(root), env=env, cwd=tmp_path) as (_, url),
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        stored = client.get("/v1/sessions/s1").json()
        resumed = client.post("/v1/sessions/s1/approvals/call_del", json={"approve": True})

    assert paused.status_code == 200, paused.text
    answer = paused.json()
    assert answer["response"] == ""
    assert answer["pending"] == [
        {"id": "call_del", "name": "delete_order", "args": {"order_id": "42"}, "agent": ""}
    ]
    assert refused.status_code == 409 and refused.json()["error"]["type"] == "approval_pending"
    assert [c["id"] for c in stored["pending"]] == ["call_del"]
    assert resumed.status_code == 200, resumed.text
    body = resumed.json()
    assert body["response"] == "Order 42 is deleted." and body["pending"] == []
    assert [(c["name"], c["result"]) for c in body["tool_calls"]] == [
        ("delete_order", "order 42 deleted")
    ]
    assert (root / "deleted").read_text() == "42"
    # the resumed request carried the tool's result for the call the model made
    last = openai_server.requests[-1].body["messages"]
    assert last[-1]["role"] == "tool" and last[-1]["tool_call_id"] == "call_del"
    logged = [(line["endpoint"], line["status"]) for line in log_lines(isolated_home, "shop")]
    assert ("/v1/sessions/{session_id}/approvals/{call_id}", 200) in logged


def test_a_denial_streams_the_rest_of_the_turn_and_the_model_hears_the_reason(
    tmp_path: Path, openai_server: OpenAIServer, serve: Serve
) -> None:
    root = shop(tmp_path / "shop", openai_server)
    openai_server.script(deleting(), text("I did not delete it."))

    with serve(root, model=None) as server:
        events = server.events("delete order 42", session_id="s1")
        body = {"approve": False, "reason": "orders are kept for audits", "stream": True}
        with server.client.stream(
            "POST", "/v1/sessions/s1/approvals/call_del", json=body
        ) as response:
            assert response.status_code == 200, response.read()
            rest = parse_sse(response.iter_lines())

    names = [name for name, _ in events]
    assert names == ["session", "approval_required", "final"]
    assert events[1][1]["name"] == "delete_order" and events[1][1]["id"] == "call_del"
    assert events[-1][1]["pending"][0]["id"] == "call_del"
    finished = [data for name, data in rest if name == "tool_call_finished"]
    assert finished[0]["name"] == "delete_order"
    assert finished[0]["error"] == "denied: orders are kept for audits"
    assert rest[-1][0] == "final" and rest[-1][1]["response"] == "I did not delete it."
    assert not (root / "deleted").exists()
    told = openai_server.requests[-1].body["messages"][-1]
    assert told["role"] == "tool" and "orders are kept for audits" in told["content"]


def test_each_call_is_decided_once_and_only_by_the_sessions_key(
    tmp_path: Path, openai_server: OpenAIServer, serve: Serve
) -> None:
    root = shop(tmp_path / "shop", openai_server)
    two = tool_calls(
        Call("delete_order", {"order_id": "1"}, id="c1"),
        Call("delete_order", {"order_id": "2"}, id="c2"),
    )
    openai_server.script(two, text("One deleted, one kept."))
    alice, bob = "a" * 32, "b" * 32

    def post(path: str, key: str, **body: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {key}"}
        return server.client.post(path, json=body, headers=headers)

    with serve(root, model=None, api_keys=(alice, bob)) as server:
        paused = post("/v1/chat", alice, message="delete 1 and 2", session_id="s1")
        others = post("/v1/sessions/s1/approvals/c1", bob, approve=True)
        unknown = post("/v1/sessions/s1/approvals/nope", alice, approve=True)
        first = post("/v1/sessions/s1/approvals/c1", alice, approve=True)
        again = post("/v1/sessions/s1/approvals/c1", alice, approve=False)
        requests_before_last = len(openai_server.requests)
        last = post("/v1/sessions/s1/approvals/c2", alice, approve=False)

    assert [c["id"] for c in paused.json()["pending"]] == ["c1", "c2"]
    assert others.status_code == 403 and others.json()["error"]["type"] == "not_your_session"
    assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "unknown_call"
    assert "c1, c2" in unknown.json()["error"]["hint"]
    # one of two decided: still paused, nothing asked of the model yet
    assert first.status_code == 200 and [c["id"] for c in first.json()["pending"]] == ["c2"]
    assert requests_before_last == 1
    assert again.status_code == 409 and again.json()["error"]["type"] == "already_decided"
    assert last.status_code == 200, last.text
    calls = {c["id"]: c for c in last.json()["tool_calls"]}
    assert calls["c1"]["result"] == "order 1 deleted"
    assert calls["c2"]["error"] == "denied: the user denied this tool call"
    assert last.json()["response"] == "One deleted, one kept."


def test_the_openai_endpoint_refuses_a_turn_that_needs_approval_naming_v1_chat(
    tmp_path: Path, openai_server: OpenAIServer, serve: Serve
) -> None:
    root = shop(tmp_path / "shop", openai_server)
    openai_server.script(deleting())

    with serve(root, model=None) as server:
        body = {"model": "shop", "messages": [{"role": "user", "content": "delete order 42"}]}
        answer = server.client.post("/v1/chat/completions", json=body)

    assert answer.status_code == 409
    error = answer.json()["error"]  # OpenAI's shape: HoloDeck's kind is the `code`
    assert error["code"] == "approval_required" and "delete_order" in error["message"]
    assert "/v1/chat" in error["hint"]
    assert not (root / "deleted").exists()
