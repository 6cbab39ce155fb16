"""AG-UI at /awp and /awp/{agent}: the official client (`@ag-ui/client`, run by Node)
runs turns on a thread that is a HoloDeck session, and the stream it reads is the
AG-UI event stream (checked with the `ag-ui-protocol` types); keys, session ownership,
limits and the request log hold as they do for /v1/chat."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from agui_client import run_client, run_input, stream_events
from server_harness import (
    WAITING_TOOL,
    WEATHER,
    Serve,
    agent_dir,
    function_tool,
    log_lines,
    until,
)

REPO = Path(__file__).resolve().parents[2]


def types_of(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def check_well_formed(events: list[dict[str, Any]], thread_id: str, run_id: str) -> None:
    """The protocol's order: one run, text messages and tool calls opened and closed."""
    assert events[0] == {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["runId"] == run_id
    open_message, calls = None, {}
    for event in events[1:-1]:
        kind = event["type"]
        if kind == "TEXT_MESSAGE_START":
            assert open_message is None
            open_message = event["messageId"]
        elif kind in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"):
            assert event["messageId"] == open_message
            if kind == "TEXT_MESSAGE_END":
                open_message = None
        elif kind == "TOOL_CALL_START":
            assert open_message is None  # text is closed while a tool runs
            calls[event["toolCallId"]] = ["START"]
        elif kind.startswith("TOOL_CALL_"):
            calls[event["toolCallId"]].append(kind.removeprefix("TOOL_CALL_"))
    assert open_message is None
    assert all(steps == ["START", "ARGS", "END", "RESULT"] for steps in calls.values()), calls


def test_the_official_client_runs_turns_on_a_thread_that_is_a_session(serve: Serve) -> None:
    with serve(WEATHER) as server:
        first, second = run_client(
            server.url + "/awp", "thread-1", "Weather in Oslo? /call *", "And tomorrow?"
        )
        stored = server.client.get("/v1/sessions/thread-1").json()
    assert "error" not in first and "error" not in second
    events = first["events"]
    check_well_formed(events, "thread-1", "run-0")
    check_well_formed(second["events"], "thread-1", "run-1")
    # the tool calls the turn made, with their arguments and results, as the session has them
    calls = [m for m in stored["messages"] if m["role"] == "tool_call"]
    results = [m for m in stored["messages"] if m["role"] == "tool_result"]
    started = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert [e["toolCallName"] for e in started] == [c["name"] for c in calls]
    args = [json.loads(e["delta"]) for e in events if e["type"] == "TOOL_CALL_ARGS"]
    # what the model asked for, with the defaults the tool filled in
    assert len(args) == len(calls)
    assert all(c["content"].items() <= a.items() for a, c in zip(args, calls, strict=True))
    sent = [json.loads(e["content"]) for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert sent == [r["content"] for r in results[:2]]
    # the answer's text, as the session stored it, and as the client's message
    answers = [m["content"] for m in stored["messages"] if m["role"] == "assistant"]
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == answers[0] and "Oslo" in text
    assert first["messages"][-1] == {
        "id": next(e["messageId"] for e in events if e["type"] == "TEXT_MESSAGE_START"),
        "role": "assistant",
        "content": text,
    }
    # the state after each run: the session, the agent, the usage of that turn
    assert first["state"]["session_id"] == "thread-1" and first["state"]["agent"] == "weather"
    assert first["state"]["usage"]["requests"] >= 1
    # the thread went on in the same session: both questions, in order
    users = [m["content"] for m in stored["messages"] if m["role"] == "user"]
    assert users == ["Weather in Oslo? /call *", "And tomorrow?"]


def test_the_stream_is_the_protocols_events_with_its_content_type(serve: Serve) -> None:
    with serve(WEATHER) as server:
        response = server.client.post(
            "/awp",
            json=run_input("t-raw", [{"type": "text", "text": "Weather in Lisbon? /call *"}]),
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = stream_events(response.text)  # every one parsed by ag-ui-protocol's types
    assert {type(e).__name__ for e in events} >= {
        "RunStartedEvent",
        "ToolCallStartEvent",
        "ToolCallResultEvent",
        "TextMessageContentEvent",
        "StateSnapshotEvent",
        "RunFinishedEvent",
    }
    dumped = [e.model_dump(by_alias=True, exclude_none=True, mode="json") for e in events]
    check_well_formed(dumped, "t-raw", "run-1")
    assert response.headers["x-request-id"] == dumped[-2]["snapshot"]["request_id"]


def test_each_agent_answers_on_its_own_path_and_awp_needs_one_agent(
    serve: Serve, tmp_path: Path
) -> None:
    one = agent_dir(tmp_path / "one", name="one")
    two = agent_dir(tmp_path / "two", name="two")
    with serve(one, two) as server:
        for name in ("one", "two"):
            (run,) = run_client(f"{server.url}/awp/{name}", f"t-{name}", "Hello")
            assert run["state"]["agent"] == name and "error" not in run
        both = server.client.post("/awp", json=run_input("t-x", "Hello"))
        unknown = server.client.post("/awp/three", json=run_input("t-x", "Hello"))
    assert both.status_code == 422 and both.json()["error"]["type"] == "agent_required"
    assert "one, two" in both.json()["error"]["hint"]
    assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "unknown_agent"


def test_keys_ownership_body_limit_and_request_log_hold_as_for_chat(
    serve: Serve, tmp_path: Path
) -> None:
    keys = (("alice", "k-alice"), ("bob", "k-bob"))
    home = tmp_path / "home"
    with serve(WEATHER, named_keys=keys, max_request_bytes=4000, log_dir=str(home / "logs")) as s:
        url = s.url + "/awp"
        (refused,) = run_client(url, "t-alice", "Hi")  # the client, without a key
        anonymous = s.client.post("/awp", json=run_input("t-alice", "Hi"))
        (alice,) = run_client(url, "t-alice", "Weather in Oslo? /call *", key="k-alice")
        bob = s.client.post(
            "/awp",
            json=run_input("t-alice", "What did alice ask?"),
            headers={"Authorization": "Bearer k-bob"},
        )
        big = s.client.post(
            "/awp",
            json=run_input("t-alice", "x" * 5000),
            headers={"Authorization": "Bearer k-alice"},
        )
    assert "401" in refused["error"]
    assert anonymous.status_code == 401 and anonymous.json()["error"]["type"] == "unauthorized"
    assert "error" not in alice
    assert bob.status_code == 404 and bob.json()["error"]["type"] == "unknown_session"
    assert big.status_code == 413 and big.json()["error"]["type"] == "too_large"
    lines = [x for x in log_lines(home, "weather") if x["endpoint"] == "/awp"]
    answered = [x for x in lines if x["status"] == 200]
    assert [(x["key"], x["session_id"], x["message_input"]) for x in answered] == [
        ("alice", "t-alice", "Weather in Oslo? /call *")
    ]
    assert answered[0]["response"] == alice["messages"][-1]["content"]
    assert [x["tool_calls"][0]["name"] for x in answered] == ["get_weather"]
    assert {x["status"] for x in lines} >= {401, 404, 413}
    assert any(x["status"] == 404 and x["key"] == "bob" for x in lines)


def test_the_rate_limit_refuses_runs_over_it(serve: Serve) -> None:
    with serve(WEATHER, api_keys=("k",), requests_per_minute=2) as server:
        auth = {"Authorization": "Bearer k"}
        codes = [
            server.client.post("/awp", json=run_input("t", "Hi"), headers=auth).status_code
            for _ in range(3)
        ]
        limited = server.client.post("/awp", json=run_input("t", "Hi"), headers=auth)
    assert codes[:2] == [200, 200] and 429 in (codes[2], limited.status_code)
    assert limited.json()["error"]["type"] == "rate_limited" and limited.headers["retry-after"]


def test_a_turn_stopped_by_a_cap_ends_the_run_with_run_error(serve: Serve, tmp_path: Path) -> None:
    path = agent_dir(
        tmp_path / "capped",
        name="capped",
        python="def ping() -> str:\n    return 'pong'\n\ndef pong() -> str:\n    return 'ping'\n",
        tools=[function_tool("ping"), function_tool("pong")],
        limits={"turn": {"max_tool_calls": 1}},
    )
    with serve(path) as server:
        (run,) = run_client(server.url + "/awp", "t-cap", "Both, please /call *")
        again = server.client.post("/awp", json=run_input("t-cap", "Hi"))
    kinds = types_of(run["events"])
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_ERROR"
    error = run["events"][-1]
    assert error["code"] == "limit_reached" and "max_tool_calls" in error["message"]
    assert "RUN_FINISHED" not in kinds
    assert again.status_code == 200  # the session goes on after the refused turn


def test_the_deploy_guides_agui_example_runs(serve: Serve) -> None:
    page = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    section = page.split("### AG-UI", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    (command,) = re.findall(r"^```sh\n(curl .*?)^```$", section, flags=re.M | re.S)
    with serve(WEATHER) as server:
        shell = command.replace("http://localhost:8000", server.url)
        done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=60)
        stored = server.client.get("/v1/sessions/my-thread-1")
    assert done.returncode == 0, done.stderr
    events = stream_events(done.stdout)
    assert type(events[0]).__name__ == "RunStartedEvent"
    assert type(events[-1]).__name__ == "RunFinishedEvent"
    assert stored.status_code == 200


def test_unknown_methods_and_paths_keep_the_error_shape(serve: Serve) -> None:
    with serve(WEATHER) as server:
        got = server.client.get("/awp")
    assert got.status_code == 405 and got.json()["error"]["type"] == "method_not_allowed"


def test_ready_agents_and_the_openapi_document_list_each_agents_protocols(serve: Serve) -> None:
    with serve(WEATHER) as server:
        ready = server.client.get("/ready").json()
        agents = server.client.get("/v1/agents").json()
        schema = server.client.get("/openapi.json").json()
    from holodeck.server._protocols import PROTOCOLS

    expected = list(PROTOCOLS)
    assert {"chat", "openai", "ag-ui", "mcp"} <= set(expected)
    assert [a["protocols"] for a in ready["agents"]] == [expected]
    assert [a["protocols"] for a in agents["agents"]] == [expected]
    listed = schema["components"]["schemas"]["AgentStatus"]["properties"]["protocols"]
    assert listed["items"]["enum"] == expected
    assert {"/awp", "/awp/{agent}"} <= set(schema["paths"])
    stream = schema["paths"]["/awp/{agent}"]["post"]["responses"]["200"]["content"]
    assert "text/event-stream" in stream


def test_a_client_that_leaves_mid_run_cancels_the_turn_and_keeps_the_history(
    serve: Serve, tmp_path: Path, isolated_home: Path
) -> None:
    root = agent_dir(
        tmp_path / "slow", "slow", python=WAITING_TOOL, tools=[function_tool("wait_here")]
    )
    with serve(root) as server:
        body = run_input("t-leave", "first /call wait_here")
        with server.client.stream("POST", "/awp", json=body) as response:
            lines = response.iter_lines()  # kept open (a closed iterator closes the stream)
            first = next(line for line in lines if line.startswith("data:"))
            assert json.loads(first[5:])["type"] == "RUN_STARTED"
            until(lambda: (root / "started").exists(), what="the tool to start")
        # the client has gone: the turn is cancelled and the thread is free at once
        history = until(
            lambda: (r := server.client.get("/v1/sessions/t-leave")).status_code == 200 and r,
            what="the cancelled turn to save its session",
        )
        assert history.json()["messages"] == []
        (root / "release").write_text("go")
        (after,) = run_client(server.url + "/awp", "t-leave", "second /call wait_here")
    results = [json.loads(e["content"]) for e in after["events"] if e["type"] == "TOOL_CALL_RESULT"]
    assert results == ["released"]
    logged = [line for line in log_lines(isolated_home, "slow") if line["endpoint"] == "/awp"]
    assert [line["status"] for line in logged] == [499, 200]


def test_a_file_the_agent_does_not_take_ends_the_run_as_a_streamed_chat_ends(
    serve: Serve,
) -> None:
    image = {"type": "data", "value": "iVBORw0KGgo=", "mimeType": "image/png"}
    content = [{"type": "text", "text": "What is this?"}, {"type": "image", "source": image}]
    with serve(WEATHER) as server:
        over_agui = server.client.post("/awp", json=run_input("t-file", content))
        attachment = {"media_type": "image/png", "data": image["value"], "name": ""}
        over_chat = server.events("What is this?", attachments=[attachment])
    events = stream_events(over_agui.text)
    error = events[-1].model_dump(by_alias=True, exclude_none=True)
    (chat_error,) = [data["error"] for name, data in over_chat if name == "error"]
    assert error["type"] == "RUN_ERROR" and error["code"] == chat_error["type"] == "input_refused"
    assert error["message"] == chat_error["message"]
