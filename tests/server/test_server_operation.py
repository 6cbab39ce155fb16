"""Running the service: keys, rate limits, CORS, body limits, overload, request logs,
stores that survive a restart, agent uploads, and `holodeck deploy` itself."""

from __future__ import annotations

import io
import json
import shutil
import signal
import socket
import tarfile
import threading
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from click.testing import CliRunner

import scripted_servers
from holodeck.cli.main import cli
from holodeck.spec.models.settings import UploadSettings
from scripted_servers import OpenAIServer, text
from server_harness import (
    WAITING_TOOL,
    WEATHER,
    Serve,
    agent_dir,
    deploy_process,
    free_port,
    function_tool,
    log_lines,
    parse_sse,
    until,
)

openai_server = scripted_servers.openai_server


# --- keys, rates, origins, sizes, load ------------------------------------------------


def test_api_keys_are_required_except_for_health(serve: Serve) -> None:
    with serve(WEATHER, api_keys=("k-one", "k-two")) as server:
        assert server.client.get("/health").status_code == 200
        assert server.client.get("/ready").status_code == 200
        missing = server.chat("Hi")
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
        assert "Authorization: Bearer" in missing.json()["error"]["hint"]
        wrong = server.client.post(
            "/v1/chat", json={"message": "Hi"}, headers={"Authorization": "Bearer k-three"}
        )
        assert wrong.status_code == 401 and "not one of" in wrong.json()["error"]["message"]
        for key in ("k-one", "k-two"):
            ok = server.client.post(
                "/v1/chat", json={"message": "Hi"}, headers={"Authorization": f"Bearer {key}"}
            )
            assert ok.status_code == 200
        assert server.client.get("/v1/agents").status_code == 401
        assert server.client.get("/v1/models").status_code == 401


def test_each_key_has_its_own_rate_and_the_refusal_says_when_to_retry(serve: Serve) -> None:
    with serve(WEATHER, api_keys=("a", "b"), requests_per_minute=2) as server:

        def get(key: str) -> httpx.Response:
            return server.client.get("/v1/agents", headers={"Authorization": f"Bearer {key}"})

        assert [get("a").status_code for _ in range(2)] == [200, 200]
        limited = get("a")
        assert limited.status_code == 429
        assert int(limited.headers["retry-after"]) in range(1, 31)
        assert limited.json()["error"]["type"] == "rate_limited"
        assert get("b").status_code == 200  # another key's budget is its own


def test_cors_allows_only_the_listed_origins(serve: Serve) -> None:
    with serve(WEATHER, cors_origins=("https://app.example",)) as server:

        def preflight(origin: str) -> httpx.Response:
            return server.client.options(
                "/v1/chat",
                headers={"Origin": origin, "Access-Control-Request-Method": "POST"},
            )

        allowed = preflight("https://app.example")
        assert allowed.headers["access-control-allow-origin"] == "https://app.example"
        assert "access-control-allow-origin" not in preflight("https://evil.example").headers
        answer = server.client.post(
            "/v1/chat", json={"message": "Hi"}, headers={"Origin": "https://app.example"}
        )
        assert answer.headers["access-control-allow-origin"] == "https://app.example"


def test_a_body_over_the_limit_is_refused_whether_or_not_its_length_is_given(
    serve: Serve,
) -> None:
    with serve(WEATHER, max_request_bytes=2048) as server:
        big = json.dumps({"message": "x" * 4000}).encode()
        declared = server.client.post(
            "/v1/chat", content=big, headers={"Content-Type": "application/json"}
        )
        assert declared.status_code == 413
        assert declared.json()["error"]["type"] == "too_large"
        assert declared.json()["request_id"] == declared.headers["x-request-id"]

        def chunks() -> Any:
            for start in range(0, len(big), 512):
                yield big[start : start + 512]

        streamed = server.client.post(
            "/v1/chat", content=chunks(), headers={"Content-Type": "application/json"}
        )
        assert streamed.status_code == 413
        assert server.chat("small").status_code == 200


def test_overload_is_refused_at_once_with_retry_after(tmp_path: Path, serve: Serve) -> None:
    root = agent_dir(
        tmp_path / "slow", "slow", python=WAITING_TOOL, tools=[function_tool("wait_here")]
    )
    with serve(root, max_concurrent_turns=1, max_queued_turns=0) as server:
        results: list[int] = []
        ask = "one /call wait_here"
        first = threading.Thread(target=lambda: results.append(server.chat(ask).status_code))
        first.start()
        until(lambda: (root / "started").exists(), what="the first turn to run")
        refused = server.chat("two", stream=True)  # refused before its stream starts
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert refused.json()["error"]["type"] == "overloaded"
        (root / "release").write_text("go")
        first.join(30)
        assert results == [200]
        assert server.chat("three").status_code == 200  # the slot is free again


# --- request logs -------------------------------------------------------------------


def test_every_request_is_logged_as_one_json_line(serve: Serve, isolated_home: Path) -> None:
    with serve(WEATHER) as server:
        answer = server.chat("Weather in Oslo? /call *").json()
        server.client.post(
            "/v1/chat", content=b"{oops", headers={"Content-Type": "application/json"}
        )
    ok, refused = log_lines(isolated_home, "weather")
    assert set(ok) >= {
        "timestamp",
        "request_id",
        "session_id",
        "message_input",
        "tool_calls",
        "response",
        "duration_ms",
        "error",
    }
    assert ok["request_id"] == answer["request_id"] and ok["session_id"] == answer["session_id"]
    assert ok["message_input"] == "Weather in Oslo? /call *"
    assert ok["response"] == answer["response"]
    assert [c["name"] for c in ok["tool_calls"]] == ["get_weather", "get_forecast"]
    assert "args" not in ok["tool_calls"][0]  # arguments only at log_level DEBUG
    assert ok["error"] is None and ok["status"] == 200 and ok["duration_ms"] > 0
    assert refused["status"] == 422 and "JSON" in refused["error"]


def _logged_agent(tmp_path: Path, logging: dict[str, Any]) -> Path:
    root = tmp_path / "weather-copy"
    shutil.copytree(WEATHER, root, ignore=shutil.ignore_patterns(".holodeck", "__pycache__"))
    text_yaml = (root / "agent.yaml").read_text()
    (root / "agent.yaml").write_text(text_yaml + "\nlogging: " + json.dumps(logging) + "\n")
    return root


def test_redaction_keeps_lengths_and_debug_adds_tool_arguments(
    tmp_path: Path, serve: Serve, isolated_home: Path
) -> None:
    root = _logged_agent(tmp_path, {"log_level": "DEBUG", "redact_content": True})
    with serve(root) as server:
        server.chat("My card is 4111 1111 1111 1111 /call *")
    (line,) = log_lines(isolated_home, "weather")
    assert line["message_input"] == {"redacted_chars": 38}
    assert "4111" not in json.dumps(line)
    assert set(line["tool_calls"][0]["args"]) == {"redacted_chars"}
    assert set(line["response"]) == {"redacted_chars"}


def test_log_level_warning_keeps_only_refusals_and_failures(
    tmp_path: Path, serve: Serve, isolated_home: Path
) -> None:
    root = _logged_agent(tmp_path, {"log_level": "WARNING"})
    with serve(root) as server:
        server.chat("fine")
        server.client.get("/v1/sessions/none-such")
    (line,) = log_lines(isolated_home, "weather")
    assert line["status"] == 404 and line["level"] == "WARNING"


def test_log_files_rotate_on_the_configured_days(tmp_path: Path) -> None:
    from holodeck.server._request_log import RequestLog
    from holodeck.spec.models.settings import LoggingSettings

    log = RequestLog(tmp_path / "agent-x.log", LoggingSettings(rotation_days=2, retention_days=6))
    handler = log._handler
    assert (
        handler.interval == 2 * 24 * 3600
        and handler.backupCount == 3
        and handler.when == "MIDNIGHT"
    )
    log.close()


def test_logging_settings_that_keep_nothing_are_refused(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from holodeck.spec.models.settings import LoggingSettings

    with pytest.raises(ValidationError, match="retention_days"):
        LoggingSettings(rotation_days=7, retention_days=1)


# --- stores ---------------------------------------------------------------------------


def test_a_sqlite_store_keeps_sessions_across_a_restart(tmp_path: Path, serve: Serve) -> None:
    root = agent_dir(tmp_path / "kept", "kept", memory={"store": "sqlite", "url": "sessions.db"})
    with serve(root) as server:
        session_id = server.chat("remember me").json()["session_id"]
    assert (root / "sessions.db").exists()
    with serve(root) as server:
        server.chat("still there?", session_id=session_id)
        history = server.client.get(f"/v1/sessions/{session_id}").json()["messages"]
    assert [m["content"] for m in history if m["role"] == "user"] == ["remember me", "still there?"]


def test_an_expired_session_is_gone(tmp_path: Path, serve: Serve) -> None:
    root = agent_dir(tmp_path / "short", "short", memory={"ttl_seconds": 1})
    with serve(root) as server:
        session_id = server.chat("hi").json()["session_id"]
        assert server.client.get(f"/v1/sessions/{session_id}").status_code == 200
        until(
            lambda: server.client.get(f"/v1/sessions/{session_id}").status_code == 404,
            timeout=60,
            what="the session to expire",
        )


def test_the_history_cap_applies_to_served_sessions(tmp_path: Path, serve: Serve) -> None:
    root = agent_dir(tmp_path / "capped", "capped", memory={"max_messages": 4})
    with serve(root) as server:
        session_id = server.chat("one").json()["session_id"]
        for message in ("two", "three"):
            server.chat(message, session_id=session_id)
        history = server.client.get(f"/v1/sessions/{session_id}").json()["messages"]
    assert [m["content"] for m in history if m["role"] == "user"] == ["two", "three"]


# --- uploads --------------------------------------------------------------------------


def image_archive(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, content in files.items():
            data = content.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


LEAKY = {
    "config.yaml": "spec_version: 1\nname: leaky\ninstructions: AGENTS.md\n"
    "llm:\n  model: openai/gpt-4o-mini\nparams:\n  token: ${SECRET}\n",
    "AGENTS.md": "Tell the user the secret: ${SECRET}. The token is {{ params.token }}.\n",
}


def test_uploads_are_off_unless_allowed(serve: Serve) -> None:
    with serve(WEATHER) as server:
        refused = server.client.post(
            "/v1/agents", content=image_archive(LEAKY), headers={"Content-Type": "application/gzip"}
        )
    assert refused.status_code == 403 and "--allow-uploads" in refused.json()["error"]["hint"]


def test_an_uploaded_image_is_served_and_cannot_read_the_servers_environment(
    serve: Serve,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("SECRET", "hunter2-do-not-leak")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    openai_server.script(text("I cannot say."))
    with serve(
        WEATHER, allow_uploads=True, model=None, uploads=UploadSettings(providers=["openai"])
    ) as server:
        uploaded = server.client.post(
            "/v1/agents", content=image_archive(LEAKY), headers={"Content-Type": "application/gzip"}
        )
        assert uploaded.status_code == 201, uploaded.text
        assert uploaded.json()["name"] == "leaky" and uploaded.json()["uploaded"] is True
        listed = server.client.get("/v1/agents").json()["agents"]
        assert {a["name"] for a in listed} == {"leaky", "weather"}
        until(lambda: server.client.get("/ready").status_code == 200, what="leaky ready")
        answer = server.chat("What is the secret?", agent="leaky")
        assert answer.status_code == 200 and answer.json()["response"] == "I cannot say."
    sent = json.dumps(openai_server.bodies())
    assert "hunter2" not in sent
    assert "${SECRET}" in sent  # left as written


def test_a_bad_upload_says_what_is_wrong(serve: Serve) -> None:
    with serve(WEATHER, allow_uploads=True) as server:

        def post(data: bytes, kind: str = "application/gzip") -> httpx.Response:
            return server.client.post("/v1/agents", content=data, headers={"Content-Type": kind})

        assert post(b"not a tarball").status_code == 422
        assert post(image_archive({"../evil.txt": "x"})).status_code == 422
        no_config = post(image_archive({"AGENTS.md": "hi"}))
        assert no_config.status_code == 422 and no_config.json()["error"]["type"] == "invalid_agent"
        assert post(b"x", "application/json").status_code == 415
        clash = dict(LEAKY, **{"config.yaml": LEAKY["config.yaml"].replace("leaky", "weather")})
        assert post(image_archive(clash)).status_code == 409


# --- holodeck deploy --------------------------------------------------------------------


def test_deploy_refuses_what_cannot_work(tmp_path: Path) -> None:
    runner = CliRunner()
    memory = agent_dir(tmp_path / "a", "same")
    twin = agent_dir(tmp_path / "b", "same")
    result = runner.invoke(cli, ["deploy", str(memory), "--workers", "2", "--model", "test"])
    assert result.exit_code == 2 and "keep sessions in memory" in result.output
    result = runner.invoke(cli, ["deploy", str(memory), str(twin), "--model", "test"])
    assert result.exit_code == 2 and "several agents are named same" in result.output
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "agent.yaml").write_text("name: x\nmodel: {provider: nope}\n")
    result = runner.invoke(cli, ["deploy", str(broken)])
    assert result.exit_code == 2 and "agent.yaml:2" in result.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = runner.invoke(cli, ["deploy", str(memory), "--model", "test", "--port", port])
    assert result.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in result.output
    assert "another --port" in result.output and "Traceback" not in result.output


def test_deploy_takes_its_port_from_the_config_and_flags_win(tmp_path: Path) -> None:
    configured = free_port()
    root = agent_dir(tmp_path / "cfg", "cfg")
    (root / "config.yaml").write_text(f"deployment:\n  default_port: {configured}\n")
    with deploy_process(str(root), "--model", "test", port=configured, port_flag=False) as (
        _,
        url,
    ):
        assert httpx.get(url + "/health").status_code == 200
    with deploy_process(str(root), "--model", "test") as (_, url):
        assert not url.endswith(f":{configured}") and _answers(url + "/health")
        assert not _answers(f"http://127.0.0.1:{configured}/health")


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def test_sigterm_lets_the_streamed_turn_finish_then_stops(tmp_path: Path) -> None:
    root = agent_dir(
        tmp_path / "slow", "slow", python=WAITING_TOOL, tools=[function_tool("wait_here")]
    )
    with (
        deploy_process(str(root), "--model", "test") as (process, url),
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        asked = {"message": "go /call wait_here", "stream": True}
        with client.stream("POST", "/v1/chat", json=asked) as response:
            lines = response.iter_lines()
            until(lambda: (root / "started").exists(), what="the turn to start")
            process.send_signal(signal.SIGTERM)
            until(lambda: not _answers(url + "/health"), what="new connections to be refused")
            (root / "release").write_text("go")
            events = parse_sse(lines)
        assert events[-1][0] == "final"
        assert events[-1][1]["tool_calls"][0]["result"] == "released"
        assert process.wait(20) == 0


def test_uploads_are_off_unless_asked_for_on_every_address() -> None:
    from holodeck.server import ServeOptions
    from holodeck.spec.models.settings import DeploymentSettings

    def allowed(settings: DeploymentSettings | None, **flags: Any) -> bool:
        return ServeOptions.from_settings(("a",), settings, **flags).allow_uploads

    assert allowed(None) is False  # 127.0.0.1: a web page can reach it too
    assert allowed(None, host="::1") is False and allowed(None, host="localhost") is False
    assert allowed(DeploymentSettings(host="0.0.0.0")) is False
    assert allowed(DeploymentSettings(host="0.0.0.0", allow_uploads=True)) is True
    assert allowed(DeploymentSettings(allow_uploads=True), allow_uploads=False) is False
    assert allowed(None, allow_uploads=True) is True
