"""`holodeck deploy`'s HTTP service, over real HTTP: chat as JSON and as Server-Sent
Events, sessions, agents, readiness, and what a client gets for each mistake."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from server_harness import (
    WAITING_TOOL,
    WEATHER,
    Serve,
    Server,
    agent_dir,
    function_tool,
    log_lines,
    until,
)


@pytest.fixture
def weather(serve: Serve) -> Iterator[Server]:
    with serve(WEATHER) as server:
        yield server


# --- chat ----------------------------------------------------------------------------


def test_a_chat_answers_with_the_tool_calls_usage_and_a_new_session(weather: Server) -> None:
    response = weather.chat("What's the weather in Paris? /call *")
    assert response.status_code == 200
    body = response.json()
    assert body["agent"] == "weather" and len(body["session_id"]) >= 16
    assert [c["name"] for c in body["tool_calls"]] == ["get_weather", "get_forecast"]
    weather_call = body["tool_calls"][0]
    assert weather_call["args"] == {"city": "Paris", "unit": "celsius"}
    assert weather_call["error"] is None and weather_call["result"]["city"] == "Paris"
    assert "get_weather" in body["response"]
    assert body["usage"]["requests"] == 2 and body["usage"]["total_tokens"] > 0
    assert body["request_id"] == response.headers["x-request-id"]


def test_a_session_continues_and_its_history_can_be_read_and_deleted(weather: Server) -> None:
    first = weather.chat("Weather in Oslo? /call *").json()
    second = weather.chat("And tomorrow? /call *", session_id=first["session_id"]).json()
    assert second["session_id"] == first["session_id"]
    history = weather.client.get(f"/v1/sessions/{first['session_id']}")
    assert history.status_code == 200
    messages = history.json()["messages"]
    said = [m["content"] for m in messages if m["role"] == "user"]
    assert said == ["Weather in Oslo? /call *", "And tomorrow? /call *"]
    assert [m["name"] for m in messages if m["role"] == "tool_call"] == [
        "get_weather",
        "get_forecast",
        "get_weather",
        "get_forecast",
    ]
    assert history.json()["usage"]["requests"] == 4
    assert weather.client.delete(f"/v1/sessions/{first['session_id']}").json() == {"deleted": True}
    gone = weather.client.get(f"/v1/sessions/{first['session_id']}")
    assert gone.status_code == 404 and gone.json()["error"]["type"] == "unknown_session"
    assert weather.client.delete(f"/v1/sessions/{first['session_id']}").status_code == 404


def test_a_client_chosen_session_id_is_kept(weather: Server) -> None:
    body = weather.chat("Hi", session_id="user-42:chat.1").json()
    assert body["session_id"] == "user-42:chat.1"
    assert weather.client.get("/v1/sessions/user-42:chat.1").status_code == 200


def test_the_stream_sends_the_session_tool_calls_text_then_the_final_answer(
    weather: Server,
) -> None:
    events = weather.events("Weather in Rome? /call *")
    names = [name for name, _ in events]
    assert names[0] == "session" and names[-1] == "final"
    assert names.count("tool_call_started") == 2 and names.count("tool_call_finished") == 2
    assert names.index("tool_call_finished") < names.index("text")
    final = events[-1][1]
    streamed = "".join(data["text"] for name, data in events if name == "text")
    assert streamed == final["response"] and final["session_id"] == events[0][1]["session_id"]
    finished = [data for name, data in events if name == "tool_call_finished"]
    assert {f["name"] for f in finished} == {"get_weather", "get_forecast"}
    assert all(f["duration_ms"] >= 0 and f["parent_id"] is None for f in finished)


def test_sub_agent_calls_are_nested_under_the_call_that_asked(tmp_path: Path, serve: Serve) -> None:
    worker_tools = "def lookup(term: str) -> str:\n    return f'found {term}'\n"
    root = agent_dir(
        tmp_path / "boss", "boss", tools=[{"type": "agent", "name": "worker", "path": "worker"}]
    )
    agent_dir(root / "worker", "worker", python=worker_tools, tools=[function_tool("lookup")])
    with serve(root) as server:
        ask = '/call worker {"task": "find /call lookup"}'  # the worker is asked for lookup
        body = server.chat(ask).json()
        (call,) = body["tool_calls"]
        assert call["name"] == "worker" and call["agent"] == ""
        assert [c["name"] for c in call["calls"]] == ["lookup"]
        assert call["calls"][0]["agent"] == "worker"
        events = server.events(ask)
        nested = [d for n, d in events if n == "tool_call_finished" and d["name"] == "lookup"]
        parent = [d for n, d in events if n == "tool_call_finished" and d["name"] == "worker"]
        assert nested[0]["parent_id"] == parent[0]["id"]


def test_a_client_that_leaves_mid_stream_cancels_the_turn_and_keeps_the_history(
    tmp_path: Path, serve: Serve, isolated_home: Path
) -> None:
    root = agent_dir(
        tmp_path / "slow", "slow", python=WAITING_TOOL, tools=[function_tool("wait_here")]
    )
    with serve(root) as server:
        with server.client.stream(
            "POST", "/v1/chat", json={"message": "first /call wait_here", "stream": True}
        ) as response:
            lines = response.iter_lines()
            session = json.loads(next(line for line in lines if line.startswith("data:"))[5:])
            until(lambda: (root / "started").exists(), what="the tool to start")
        # the client has gone: the turn is cancelled and the session is free at once
        path = f"/v1/sessions/{session['session_id']}"
        history = until(
            lambda: (r := server.client.get(path)).status_code == 200 and r,
            what="the cancelled turn to save its session",
        )
        assert history.json()["messages"] == []
        (root / "release").write_text("go")
        after = server.chat("second /call wait_here", session_id=session["session_id"]).json()
        assert after["tool_calls"][0]["result"] == "released"
    logged = [line for line in log_lines(isolated_home, "slow") if line["endpoint"] == "/v1/chat"]
    assert [line["status"] for line in logged] == [499, 200]
    assert (
        logged[0]["error"] == "CancelledError"
        and logged[0]["message_input"] == "first /call wait_here"
    )


def test_turns_of_one_session_run_one_after_another_in_order(tmp_path: Path, serve: Serve) -> None:
    tools = "def note(text: str) -> str:\n    return 'noted'\n"
    root = agent_dir(
        tmp_path / "notes",
        "notes",
        python=tools,
        tools=[function_tool("note")],
        memory={"max_messages": 200},
    )
    with serve(root) as server:
        session_id = server.chat("turn 0 /call note").json()["session_id"]
        results: list[int] = []

        def turn(n: int) -> None:
            response = server.chat(f"turn {n} /call note", session_id=session_id)
            results.append(response.status_code)

        threads = [threading.Thread(target=turn, args=(n,)) for n in range(1, 9)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        messages = server.client.get(f"/v1/sessions/{session_id}").json()["messages"]
    assert results == [200] * 8
    said = [m["content"] for m in messages if m["role"] == "user"]
    assert sorted(said) == sorted(f"turn {n} /call note" for n in range(9))
    assert said[0] == "turn 0 /call note"
    # each turn's messages stayed together: none interleaved with another's
    roles = [m["role"] for m in messages]
    assert roles == ["user", "tool_call", "tool_result", "assistant"] * 9


BARRIER_TOOL = """
import asyncio

arrived = 0
everyone = asyncio.Event()

async def meet(name: str) -> str:
    '''Returns when two calls are in progress at once.'''
    global arrived
    arrived += 1
    if arrived >= 2:
        everyone.set()
    await asyncio.wait_for(everyone.wait(), 10)
    return "met"
"""


def test_different_sessions_run_at_the_same_time(tmp_path: Path, serve: Serve) -> None:
    root = agent_dir(tmp_path / "meet", "meet", python=BARRIER_TOOL, tools=[function_tool("meet")])
    with serve(root) as server:
        answers: list[dict[str, Any]] = []

        def turn(n: int) -> None:
            answers.append(server.chat("meet /call meet", session_id=f"s{n}").json())

        threads = [threading.Thread(target=turn, args=(n,)) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    # each call returned only because the other was running at the same time
    assert [a["tool_calls"][0]["result"] for a in answers] == ["met", "met"]


def test_several_agents_are_served_each_by_name(tmp_path: Path, serve: Serve) -> None:
    other = agent_dir(tmp_path / "other", "other")
    with serve(WEATHER, other) as server:
        names = [a["name"] for a in server.client.get("/v1/agents").json()["agents"]]
        assert names == ["other", "weather"]
        refused = server.chat("Hi")
        assert refused.status_code == 422 and refused.json()["error"]["type"] == "agent_required"
        assert "other, weather" in refused.json()["error"]["hint"]
        assert server.chat("Hi", agent="other").json()["tool_calls"] == []
        assert len(server.chat("Hi /call *", agent="weather").json()["tool_calls"]) == 2
        unknown = server.chat("Hi", agent="nobody")
        assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "unknown_agent"
        models = server.client.get("/v1/models").json()
        assert [m["id"] for m in models["data"]] == ["other", "weather"]


def test_health_answers_at_once_and_ready_waits_for_the_tools(tmp_path: Path) -> None:
    # an MCP server that takes a while to start: /health is up, /ready says 503 until then
    slow = tmp_path / "slow_mcp.py"
    slow.write_text(
        "import time, sys, pathlib\n"
        f"while not pathlib.Path({str(tmp_path / 'go')!r}).exists():\n    time.sleep(0.01)\n"
        f"exec(open({str(Path(__file__).parents[1] / 'mcp_servers' / 'demo.py')!r}).read())\n",
        encoding="utf-8",
    )
    tool = {
        "type": "mcp",
        "name": "demo",
        "command": "python3",
        "args": [str(slow)],
        "startup_timeout": 60,
    }
    import sys

    tool["command"] = sys.executable
    root = agent_dir(tmp_path / "mcp", "mcp", tools=[tool])
    from server_harness import deploy_process

    with deploy_process(str(root), "--model", "test") as (_, url):
        assert httpx.get(url + "/health").json() == {"status": "ok"}
        waiting = httpx.get(url + "/ready")
        assert waiting.status_code == 503
        assert waiting.json()["agents"][0]["status"] == "loading"
        (tmp_path / "go").write_text("")
        until(lambda: httpx.get(url + "/ready").status_code == 200, what="ready")


# --- mistakes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status", "kind", "says"),
    [
        (b"{not json", 422, "invalid_request", "JSON"),
        (b'{"message": 3}', 422, "invalid_request", "body.message"),
        (b'{"message": ""}', 422, "invalid_request", "body.message"),
        (b'{"mesage": "hi"}', 422, "invalid_request", "body.mesage: Extra inputs"),
        (b'{"message": "hi", "session_id": "../etc"}', 422, "invalid_request", "session_id"),
        (
            b'{"message": "hi", "attachments": [{"media_type": "image/png", "data": "!!!!"}]}',
            422,
            "invalid_request",
            "body.attachments.0.data: String should",
        ),
        (b"[]", 422, "invalid_request", "body"),
    ],
)
def test_bad_requests_get_a_clear_4xx(
    weather: Server, body: bytes, status: int, kind: str, says: str
) -> None:
    response = weather.client.post(
        "/v1/chat", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == kind and says in error["message"]
    assert response.json()["request_id"] == response.headers["x-request-id"]


def test_unknown_paths_and_methods_answer_in_json(weather: Server) -> None:
    missing = weather.client.get("/v1/nothing")
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found"
    wrong = weather.client.put("/v1/chat")
    assert wrong.status_code == 405 and wrong.json()["error"]["type"] == "method_not_allowed"


def test_an_attachment_the_agent_does_not_take_is_refused(weather: Server) -> None:
    image = {"media_type": "image/png", "data": "iVBORw0KGgo=", "name": "x.png"}
    response = weather.chat("What is this?", attachments=[image])
    assert response.status_code == 422  # the client's input, not the server's fault
    assert response.json()["error"]["type"] == "input_refused"


def test_the_request_id_a_client_sends_is_used(weather: Server, isolated_home: Path) -> None:
    response = weather.client.post(
        "/v1/chat", json={"message": "Hi"}, headers={"X-Request-ID": "trace-1234"}
    )
    assert response.json()["request_id"] == "trace-1234"
    assert response.headers["x-request-id"] == "trace-1234"
    assert log_lines(isolated_home, "weather")[-1]["request_id"] == "trace-1234"


def test_the_chat_page_is_served(weather: Server) -> None:
    page = weather.client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert weather.client.head("/").status_code == 200


def test_a_served_sessions_own_mcp_server_lives_across_its_turns(
    tmp_path: Path, serve: Serve
) -> None:
    import sys

    pids = tmp_path / "pids"
    demo = Path(__file__).parents[1] / "mcp_servers" / "demo.py"
    server_entry = {
        "type": "mcp",
        "name": "demo",
        "command": sys.executable,
        "args": [str(demo)],
        "env": {"DEMO_PID_FILE": str(pids)},
        "tools": ["whoami"],
        "scope": "session",
    }
    root = agent_dir(tmp_path / "own", "own", tools=[server_entry])

    def started() -> int:
        return len(pids.read_text().split()) if pids.exists() else 0

    with serve(root) as server:
        first = server.chat("who? /call *", session_id="a").json()["tool_calls"][0]["result"]
        second = server.chat("again? /call *", session_id="a").json()["tool_calls"][0]["result"]
        assert first["pid"] == second["pid"] and started() == 1  # one server, still running
        other = server.chat("who? /call *", session_id="b").json()["tool_calls"][0]["result"]
        assert other["pid"] != first["pid"] and started() == 2
        server.client.delete("/v1/sessions/a")
        renewed = server.chat("new start /call *", session_id="a").json()["tool_calls"][0]["result"]
        assert renewed["pid"] != first["pid"]  # a deleted conversation starts afresh
    until(lambda: all(not _alive(int(p)) for p in pids.read_text().split()), what="servers stopped")


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
