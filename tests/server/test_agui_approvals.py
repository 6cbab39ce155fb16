"""AG-UI approvals: a turn that pauses on a call waiting for a person's approval ends its
run with an interrupt outcome (AG-UI 1.0) naming the call, and the next run's `resume`
carries the decision into the same turn: approved, the tool runs; denied, it does not and
the model is told why. The official client (@ag-ui/client) runs against `holodeck deploy`
as a process of its own, whose model is a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

import scripted_servers
from agui_client import node_client, run_client, run_input, stream_events
from scripted_servers import Call, OpenAIServer, text, tool_calls
from server_harness import agent_dir, deploy_process, function_tool

openai_server = scripted_servers.openai_server

CLOSING_TOOL = '''
from pathlib import Path

def close_shop(hour: int) -> str:
    """Closes the shop at an hour of the day."""
    Path(__file__).with_name("closed").write_text(str(hour))
    return f"the shop closes at {hour}"
'''


def _deploy(tmp_path: Path, openai_server: OpenAIServer) -> Any:
    root = agent_dir(
        tmp_path / "shop",
        "shop",
        model={"provider": "openai", "name": "gpt-4o-mini", "endpoint": openai_server.url},
        tools=[{**function_tool("close_shop"), "approval": "required"}],
        python=CLOSING_TOOL,
    )
    env = {"OPENAI_API_KEY": "sk-test", "HOLODECK_HOME": str(tmp_path / "home")}
    return root, deploy_process(str(root), env=env, cwd=tmp_path)


def _paused_on_the_call(run: dict[str, Any]) -> None:
    """The run showed the call and ended with an interrupt for it, without its result."""
    assert "error" not in run, run
    kinds = [e["type"] for e in run["events"]]
    assert "TOOL_CALL_RESULT" not in kinds
    start = next(e for e in run["events"] if e["type"] == "TOOL_CALL_START")
    assert (start["toolCallId"], start["toolCallName"]) == ("call_close", "close_shop")
    args = "".join(e["delta"] for e in run["events"] if e["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args) == {"hour": 18}
    finished = run["events"][-1]
    assert finished["type"] == "RUN_FINISHED"
    (interrupt,) = finished["outcome"]["interrupts"]
    assert finished["outcome"]["type"] == "interrupt"
    assert interrupt["id"] == interrupt["toolCallId"] == "call_close"
    assert interrupt["reason"] == "tool_approval"
    assert interrupt["responseSchema"]["required"] == ["approve"]
    # the official client holds the interrupt for the page to answer
    assert [i["id"] for i in run["interrupts"]] == ["call_close"]


def _result_of_the_call(run: dict[str, Any]) -> str:
    assert "error" not in run, run
    assert run["interrupts"] == []
    assert run["events"][-1]["type"] == "RUN_FINISHED"
    assert run["events"][-1].get("outcome") is None
    # the call was shown by the run that paused: this one gives only its result
    assert "TOOL_CALL_START" not in [e["type"] for e in run["events"]]
    (result,) = [e for e in run["events"] if e["type"] == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == "call_close"
    return str(result["content"])


def _answer(run: dict[str, Any]) -> str:
    return "".join(e["delta"] for e in run["events"] if e["type"] == "TEXT_MESSAGE_CONTENT")


def test_an_approval_is_an_interrupt_and_approving_it_runs_the_tool(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    node_client()  # skips, saying how, without Node or tests/js's packages
    openai_server.script(
        tool_calls(Call("close_shop", {"hour": 18}, id="call_close")),
        text("The shop closes at 18 today."),
    )
    root, deploy = _deploy(tmp_path, openai_server)
    with deploy as (_, url):
        first, second = run_client(
            url + "/awp", "thread-1", "Close the shop at six", 'resume:{"approve": true}'
        )
        # the call is decided: answering it again finds nothing waiting
        again = {
            **run_input("thread-1", "ignored", run_id="run-3"),
            "resume": [
                {"interruptId": "call_close", "status": "resolved", "payload": {"approve": True}}
            ],
        }
        late = httpx.post(url + "/awp", json=again, timeout=30)

    _paused_on_the_call(first)
    assert "the shop closes at 18" in _result_of_the_call(second)
    assert (root / "closed").read_text() == "18"  # the tool ran, once approved
    assert _answer(second) == "The shop closes at 18 today."
    sent = openai_server.requests[1].body["messages"]
    (result,) = [m for m in sent if m["role"] == "tool"]
    assert result["tool_call_id"] == "call_close"
    assert "the shop closes at 18" in result["content"]

    assert late.status_code == 409, late.text
    assert late.json()["error"]["type"] == "unknown_call"
    assert "call_close" in late.json()["error"]["message"]


def test_denying_the_interrupt_resumes_the_turn_without_running_the_tool(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    node_client()
    openai_server.script(
        tool_calls(Call("close_shop", {"hour": 18}, id="call_close")),
        text("I left the shop open, as you asked."),
    )
    root, deploy = _deploy(tmp_path, openai_server)
    with deploy as (_, url):
        first, second = run_client(
            url + "/awp",
            "thread-1",
            "Close the shop at six",
            'resume:{"approve": false, "reason": "customers are still inside"}',
        )

    _paused_on_the_call(first)
    assert "customers are still inside" in _result_of_the_call(second)
    assert not (root / "closed").exists()  # the tool never ran
    assert _answer(second) == "I left the shop open, as you asked."
    # the model was told the call was denied, and why
    sent = openai_server.requests[1].body["messages"]
    (result,) = [m for m in sent if m["role"] == "tool"]
    assert result["tool_call_id"] == "call_close"
    assert "customers are still inside" in result["content"]


def test_a_cancelled_interrupt_denies_the_call_and_a_malformed_answer_says_what_to_send(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    node_client()
    openai_server.script(
        tool_calls(Call("close_shop", {"hour": 18}, id="call_close")),
        text("The shop stays open."),
    )
    root, deploy = _deploy(tmp_path, openai_server)

    def answer(url: str, entry: dict[str, Any]) -> httpx.Response:
        body = {**run_input("thread-1", "ignored", run_id="run-2"), "resume": [entry]}
        return httpx.post(url + "/awp", json=body, timeout=30)

    with deploy as (_, url):
        (first,) = run_client(url + "/awp", "thread-1", "Close the shop at six")
        vague = answer(url, {"interruptId": "call_close", "status": "resolved", "payload": "ok"})
        cancelled = answer(url, {"interruptId": "call_close", "status": "cancelled"})

    _paused_on_the_call(first)
    assert vague.status_code == 422, vague.text
    assert "resume.0.payload" in vague.json()["error"]["message"]
    assert '"approve"' in vague.json()["error"]["hint"]
    assert cancelled.status_code == 200, cancelled.text
    events = stream_events(cancelled.text)
    (result,) = [e for e in events if e.type == "TOOL_CALL_RESULT"]
    assert "denied" in result.content and "dismissed" in result.content
    assert not (root / "closed").exists()
