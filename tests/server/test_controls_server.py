"""Controls on a served agent: `holodeck deploy` and the app under uvicorn, with the
model a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import httpx2 as httpx
import pytest

import scripted_servers
from scripted_servers import OpenAIServer, server_error, text
from server_harness import Serve, deploy_process, log_lines, parse_sse
from test_controls import agent_files, looping
from yaml_dump import dump

openai_server = scripted_servers.openai_server


def write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (root / name).write_text(content, encoding="utf-8")
    return root


def test_deploy_stops_a_tool_loop_with_429_limit_reached_and_keeps_nothing(
    tmp_path: Path, openai_server: OpenAIServer, isolated_home: Path
) -> None:
    root = write(
        tmp_path / "demo", agent_files(openai_server, limits={"turn": {"max_tool_calls": 2}})
    )
    openai_server.script(*looping(6), *looping(6))
    env = {"HOLODECK_HOME": os.environ["HOLODECK_HOME"]}

    with (
        deploy_process(str(root), env=env, cwd=tmp_path) as (_, url),
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        answer = client.post("/v1/chat", json={"message": "find it", "session_id": "s1"})
        body = {"message": "find it", "session_id": "s2", "stream": True}
        with client.stream("POST", "/v1/chat", json=body) as response:
            events = parse_sse(response.iter_lines())
        history = client.get("/v1/sessions/s1")

    assert answer.status_code == 429
    error = answer.json()["error"]
    assert error["type"] == "limit_reached" and "limits.turn.max_tool_calls" in error["message"]
    name, data = events[-1]
    assert name == "error" and data["error"]["type"] == "limit_reached"
    assert history.status_code == 404 or history.json().get("messages") == []
    assert log_lines(isolated_home, "demo")[0]["status"] == 429


def test_a_served_fallback_answer_names_its_model_in_the_answer_and_the_log(
    tmp_path: Path, openai_server: OpenAIServer, serve: Serve, isolated_home: Path
) -> None:
    files = agent_files(openai_server, model={"fallbacks": ["backup/gpt-4o"]})
    files["config.yaml"] = dump(
        {
            "providers": {
                "backup": {"provider": "openai", "endpoint": openai_server.url, "api_key": "k"}
            }
        }
    )
    root = write(tmp_path / "demo", files)
    openai_server.script(server_error(), text("from the backup"))

    with serve(root, model=None) as server:
        answer = server.chat("hi").json()

    assert answer["response"] == "from the backup" and answer["model"] == "gpt-4o"
    assert log_lines(isolated_home, "demo")[-1]["model"] == "gpt-4o"


def test_each_api_key_has_its_own_daily_cap(
    tmp_path: Path, openai_server: OpenAIServer, serve: Serve
) -> None:
    files = agent_files(openai_server, limits={"key_daily": {"max_requests": 2}})
    root = write(tmp_path / "demo", files)
    openai_server.script(text("1"), text("2"), text("3"))

    def ask(key: str) -> httpx.Response:
        return server.client.post(
            "/v1/chat", json={"message": "hi"}, headers={"Authorization": f"Bearer {key}"}
        )

    with serve(root, model=None, api_keys=("a" * 32, "b" * 32)) as server:
        statuses = [ask("a" * 32).status_code for _ in range(3)]
        third = ask("a" * 32)
        other = ask("b" * 32)

    assert statuses == [200, 200, 429]
    assert third.json()["error"]["type"] == "limit_reached"
    assert "limits.key_daily.max_requests" in third.json()["error"]["message"]
    assert int(third.headers["retry-after"]) > 0
    assert other.status_code == 200, other.text
    assert len(openai_server.requests) == 3  # alice's refused turns never reached the model


def test_the_served_turns_span_names_the_model_that_answered(
    tmp_path: Path, openai_server: OpenAIServer, serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holodeck.observability import shutdown_shared
    from otlp_receiver import otlp_http

    monkeypatch.setenv("OPENAI_API_KEY", "k")  # the backup entry's key

    with otlp_http() as received:
        observability = {
            "enabled": True,
            "traces": {"schedule_delay_millis": 50},
            "exporters": {"otlp": {"endpoint": received.endpoint, "protocol": "http"}},
        }
        files = agent_files(
            openai_server, model={"fallbacks": ["backup/gpt-4o"]}, observability=observability
        )
        files["config.yaml"] = dump(
            {"providers": {"backup": {"provider": "openai", "endpoint": openai_server.url}}}
        )
        root = write(tmp_path / "demo", files)
        openai_server.script(server_error(), text("from the backup"))
        try:
            with serve(root, model=None) as server:
                answer = server.chat("hi")
            assert answer.status_code == 200, answer.text

            def served_span() -> bool:
                return any(s.name == "/v1/chat" for s in received.spans)

            received.wait_for(lambda r: served_span())
            span = next(s for s in received.spans if s.name == "/v1/chat")
            assert span.attributes["gen_ai.response.model"] == "gpt-4o"
        finally:
            asyncio.run(shutdown_shared())


def test_a_served_session_at_its_cost_budget_refuses_the_next_turn(
    tmp_path: Path, openai_server: OpenAIServer, serve: Serve
) -> None:
    # gpt-4o-mini: $0.15 per million input tokens: the first turn spends the whole budget
    files = agent_files(openai_server, limits={"session": {"max_cost_usd": 0.15}})
    root = write(tmp_path / "demo", files)
    openai_server.script(text("first", input_tokens=1_000_000, output_tokens=0), text("new"))

    with serve(root, model=None) as server:
        first = server.chat("one", session_id="s1")
        again = server.chat("two", session_id="s1")
        other = server.chat("three", session_id="s2")

    assert first.status_code == 200 and first.json()["response"] == "first"
    assert again.status_code == 429
    assert "has reached limits.session.max_cost_usd" in again.json()["error"]["message"]
    assert other.status_code == 200 and other.json()["response"] == "new"  # another session
    assert len(openai_server.requests) == 2  # the refused turn never reached the model
