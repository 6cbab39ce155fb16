"""AG-UI frontend tools: the page's own tools (`RunAgentInput.tools`, CopilotKit's
frontend actions) are offered to the model; a call to one ends the run with its
TOOL_CALL_* events for the page to run, and the next run, carrying the result as a
`tool` message, goes on with the turn. The official client (@ag-ui/client) runs against
`holodeck deploy` as a process of its own, whose model is a scripted OpenAI-compatible
server that records each request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import scripted_servers
from agui_client import node_client, run_client
from scripted_servers import Call, OpenAIServer, text, tool_calls
from server_harness import agent_dir, deploy_process

openai_server = scripted_servers.openai_server

PAGE_TOOL = {
    "name": "set_background",
    "description": "Change the page's background colour",
    "parameters": {
        "type": "object",
        "properties": {"colour": {"type": "string"}},
        "required": ["colour"],
    },
}


def _agent(tmp_path: Path, openai_server: OpenAIServer) -> Path:
    return agent_dir(
        tmp_path / "page",
        "page",
        model={"provider": "openai", "name": "gpt-4o-mini", "endpoint": openai_server.url},
    )


def test_a_call_to_the_pages_tool_ends_the_run_and_its_result_continues_the_turn(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    node_client()  # skips, saying how, without Node or tests/js's packages
    root = _agent(tmp_path, openai_server)
    monkeypatch.setenv("AGUI_TOOLS", json.dumps([PAGE_TOOL]))
    openai_server.script(
        tool_calls(Call("set_background", {"colour": "teal"}, id="call_bg")),
        text("The background is teal now."),
    )
    env = {"OPENAI_API_KEY": "sk-test", "HOLODECK_HOME": str(tmp_path / "home")}
    with deploy_process(str(root), env=env, cwd=tmp_path) as (_, url):
        first, second = run_client(
            url + "/awp", "thread-1", "Make it teal", 'tool:{"ok": true, "colour": "teal"}'
        )

    # the model was offered the page's tool with its schema
    offered = openai_server.requests[0].body["tools"]
    (tool,) = [t["function"] for t in offered if t["function"]["name"] == "set_background"]
    assert tool["parameters"]["properties"] == {"colour": {"type": "string"}}

    # the first run ends at the call, for the page to run: no result from the server
    assert "error" not in first, first
    kinds = [e["type"] for e in first["events"]]
    assert kinds[-1] == "RUN_FINISHED"
    assert "TOOL_CALL_RESULT" not in kinds
    start = next(e for e in first["events"] if e["type"] == "TOOL_CALL_START")
    assert (start["toolCallId"], start["toolCallName"]) == ("call_bg", "set_background")
    args = "".join(e["delta"] for e in first["events"] if e["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args) == {"colour": "teal"}
    (assistant,) = [m for m in first["messages"] if m.get("toolCalls")]
    assert assistant["toolCalls"][0]["function"]["name"] == "set_background"

    # the second run carries the page's result; the model reads it and answers
    assert "error" not in second, second
    answer = "".join(e["delta"] for e in second["events"] if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert answer == "The background is teal now."
    sent = openai_server.requests[1].body["messages"]
    (result,) = [m for m in sent if m["role"] == "tool"]
    assert result["tool_call_id"] == "call_bg"
    assert "teal" in result["content"] and "ok" in result["content"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["Make it teal"]


def test_a_page_tool_named_as_the_agents_own_is_refused(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    node_client()
    root = agent_dir(
        tmp_path / "page",
        "page",
        model={"provider": "openai", "name": "gpt-4o-mini", "endpoint": openai_server.url},
        tools=[
            {
                "name": "set_background",
                "type": "prompt",
                "description": "Suggest a colour",
                "template": "Suggest a colour for {{ mood }}",
                "parameters": {"mood": {"type": "string"}},
            }
        ],
    )
    monkeypatch.setenv("AGUI_TOOLS", json.dumps([PAGE_TOOL]))
    env = {"OPENAI_API_KEY": "sk-test", "HOLODECK_HOME": str(tmp_path / "home")}
    with deploy_process(str(root), env=env, cwd=tmp_path) as (_, url):
        (run,) = run_client(url + "/awp", "thread-1", "Make it teal")
    assert "tools.0.name" in run["error"] and "agent's own tool" in run["error"], run
    assert openai_server.requests == []


def test_a_users_message_while_the_pages_call_waits_says_to_send_its_result(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    node_client()
    root = _agent(tmp_path, openai_server)
    monkeypatch.setenv("AGUI_TOOLS", json.dumps([PAGE_TOOL]))
    openai_server.script(tool_calls(Call("set_background", {"colour": "red"}, id="call_bg")))
    env = {"OPENAI_API_KEY": "sk-test", "HOLODECK_HOME": str(tmp_path / "home")}
    with deploy_process(str(root), env=env, cwd=tmp_path) as (_, url):
        first, second = run_client(url + "/awp", "thread-1", "Make it red", "And bigger?")
    assert "error" not in first, first
    assert "waits for the result of set_background (call_bg)" in second["error"], second
    assert len(openai_server.requests) == 1


def test_the_pages_state_is_kept_per_thread_and_returned_in_the_snapshot(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    node_client()
    root = _agent(tmp_path, openai_server)
    openai_server.script(text("Noted."), text("Still noted."), text("Other thread."))
    env = {"OPENAI_API_KEY": "sk-test", "HOLODECK_HOME": str(tmp_path / "home")}
    with deploy_process(str(root), env=env, cwd=tmp_path) as (_, url):
        monkeypatch.setenv("AGUI_STATE", json.dumps({"theme": "dark", "cart": [1, 2]}))
        (first,) = run_client(url + "/awp", "thread-1", "Remember my cart")
        monkeypatch.setenv("AGUI_STATE", "{}")  # the page loaded again: it has no state
        (again,) = run_client(url + "/awp", "thread-1", "What is in it?")
        (other,) = run_client(url + "/awp", "thread-2", "Hello")
    for run in (first, again):
        assert "error" not in run, run
        (snapshot,) = [e["snapshot"] for e in run["events"] if e["type"] == "STATE_SNAPSHOT"]
        assert snapshot["theme"] == "dark" and snapshot["cart"] == [1, 2]
        assert snapshot["session_id"] == "thread-1"
        assert run["state"]["theme"] == "dark"  # the client's state is the snapshot
    assert "theme" not in other["state"] and other["state"]["session_id"] == "thread-2"
