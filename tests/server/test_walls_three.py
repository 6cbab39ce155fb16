"""Walls against hostile and careless input, round three: uploads that fail to start, MCP
clients that hang up, JSON nested without end, A2A refusals in the log, and YAML flow
collections nested thousands deep."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2 as httpx

from agui_client import run_input
from server_harness import (
    REPO,
    WEATHER,
    Serve,
    agent_dir,
    free_port,
    function_tool,
    log_lines,
    until,
)
from test_server_operation import image_archive
from test_server_walls import LEAVING_TOOL

# --- YAML nested past libyaml's own limit -----------------------------------------------------


def test_yaml_nested_thousands_deep_is_refused_at_the_limit_at_once(tmp_path: Path) -> None:
    for depth, kind in ((2_000, "["), (20_000, "{")):
        opened = "{a: " * depth if kind == "{" else "[" * depth
        closed = "}" * depth if kind == "{" else "]" * depth
        path = tmp_path / "agent.yaml"
        path.write_text(
            "name: deep\nmodel: {provider: test}\ninstructions: {inline: Hi}\n"
            f"metadata: {opened}1{closed}\n",
            encoding="utf-8",
        )
        done = subprocess.run(
            [sys.executable, "-m", "holodeck", "validate", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        said = done.stdout + done.stderr
        assert done.returncode == 2, said
        assert "agent.yaml:4: error: values nest more than 100 levels deep" in said
        assert "recursion" not in said and "Traceback" not in said


# --- an upload that fails to start ---------------------------------------------------------------

# an absolute path's directories, as a server's disk would show in a message
DISK_PATH = re.compile(r"(?<![\w:/])/[\w.-]+/")


def test_an_upload_that_fails_to_start_is_failed_and_the_server_stays_ready(
    serve: Serve,
) -> None:
    broken = {
        "config.yaml": "spec_version: 1\nname: broken\ninstructions: AGENTS.md\n"
        "llm:\n  model: openai/gpt-4o-mini\n",
        "AGENTS.md": "You help.\n",
        "tools/mcp/local.yaml": "name: local\ntransport: stdio\ncommand: "
        f"{sys.executable}\nargs: [no_such_server.py]\n",
    }
    alice = {"Authorization": "Bearer k-alice"}
    keys = (("alice", "k-alice"),)
    with serve(WEATHER, allow_uploads=True, named_keys=keys) as server:
        sent = server.client.post(
            "/v1/agents",
            content=image_archive(broken),
            headers={"Content-Type": "application/gzip", **alice},
        )
        assert sent.status_code == 201, sent.text

        def listed() -> dict[str, Any]:
            agents = server.client.get("/v1/agents", headers=alice).json()["agents"]
            return {a["name"]: a for a in agents}

        until(lambda: listed()["broken"]["status"] == "failed", what="the upload to fail")
        ready = server.client.get("/ready")  # without a key
        assert ready.status_code == 200, ready.text
        by_name = {a["name"]: a for a in ready.json()["agents"]}
        assert by_name["weather"]["status"] == "ready" and ready.json()["ready"] is True
        chat = server.client.post(
            "/v1/chat", json={"message": "Hi", "agent": "broken"}, headers=alice
        )
        assert chat.status_code == 503
        errors = [
            by_name["broken"]["error"],
            listed()["broken"]["error"],
            chat.json()["error"]["message"],
        ]
        for error in errors:
            assert "no_such_server.py" in error and "config.yaml" in error, error
            assert DISK_PATH.search(error) is None, error
        weather = server.client.post(
            "/v1/chat", json={"message": "Hi", "agent": "weather"}, headers=alice
        )
        assert weather.status_code == 200


# --- an MCP client that hangs up during tools/call ---------------------------------------------


def _call_and_hang_up(port: int, body: dict[str, Any], started: Path) -> None:
    data = json.dumps(body).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head.encode() + data)
        until(started.exists, what="the turn's tool to start")
    # the connection closes here, before any answer


def test_an_mcp_client_that_hangs_up_during_a_tool_call_cancels_the_turn(
    tmp_path: Path, serve: Serve, isolated_home: Path
) -> None:
    root = agent_dir(
        tmp_path / "hang", "hang", python=LEAVING_TOOL, tools=[function_tool("wait_here")]
    )
    with serve(root) as server:
        port = int(server.url.rsplit(":", 1)[1])
        arguments = {"question": "first /call wait_here", "session_id": "s-mcp"}
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "hang", "arguments": arguments},
        }
        _call_and_hang_up(port, call, root / "started")
        until((root / "cancelled").exists, timeout=20, what="the tool to be cancelled")
        history = until(
            lambda: (r := server.client.get("/v1/sessions/s-mcp")).status_code == 200 and r,
            what="the session to be free and saved as it was",
        )
        assert history.json()["messages"] == []
    logged = [line["status"] for line in log_lines(isolated_home, "hang")]
    assert logged == [499]


# --- JSON bodies nested without end ---------------------------------------------------------


def _nested(depth: int) -> str:
    """JSON text nesting objects and arrays `depth` levels deep."""
    opened = "".join("[" if level % 2 else '{"a": ' for level in range(depth))
    closed = "".join("]" if level % 2 else "}" for level in reversed(range(depth)))
    return opened + '"deep"' + closed


def _with(body: Any, deep: str) -> str:
    return json.dumps(body).replace('"DEEP"', deep)


def test_every_route_refuses_a_body_nested_too_deep_with_400(serve: Serve) -> None:
    mcp = {"Accept": "application/json, text/event-stream"}
    with serve(WEATHER, allow_uploads=True) as server:
        for depth in (150, 1_000, 5_000):
            deep = _nested(depth)
            bodies: list[tuple[str, str, dict[str, str]]] = [
                ("/v1/chat", _with({"message": "Hi", "attachments": "DEEP"}, deep), {}),
                ("/v1/chat/completions", _with({"model": "weather", "messages": "DEEP"}, deep), {}),
                ("/awp", _with({**run_input("t-1", "Hi"), "forwardedProps": "DEEP"}, deep), {}),
                ("/a2a/weather", _with({"jsonrpc": "2.0", "id": 1, "params": "DEEP"}, deep), {}),
                ("/mcp", _with({"jsonrpc": "2.0", "id": 1, "params": "DEEP"}, deep), mcp),
                ("/v1/agents", deep, {}),
            ]
            for path, body, headers in bodies:
                answer = server.client.post(
                    path,
                    content=body,
                    headers={"Content-Type": "application/json", **headers},
                )
                assert answer.status_code == 400, (path, depth, answer.text)
                error = answer.json()["error"]
                openai = path == "/v1/chat/completions"  # OpenAI's shape: the kind is `code`
                assert error["code" if openai else "type"] == "too_deep", (path, depth, error)
                assert "more than 100" in error["message"]
        # brackets inside strings nest nothing; a body within the limit is answered
        said = server.chat("[" * 5_000 + ' \\"{', session_id="brackets")
        assert said.status_code == 200, said.text
        within = _with({**run_input("t-2", "Hi"), "forwardedProps": "DEEP"}, _nested(90))
        answer = server.client.post(
            "/awp", content=within, headers={"Content-Type": "application/json"}
        )
        assert answer.status_code == 200, answer.text


# --- A2A refusals in the server's log --------------------------------------------------------

MALFORMED: list[Any] = [
    "not json",
    [1, 2],
    {"id": 5},
    {"jsonrpc": "1.0", "id": 3, "method": "GetTask"},
    {"jsonrpc": "2.0", "id": 2, "method": "nonsense"},
    {"jsonrpc": "2.0", "id": True, "method": "GetTask"},
    {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"role": 5}}},
    {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": "x"},
    {"jsonrpc": "2.0", "id": 4, "method": "message/send", "params": {"message": 7}},
    {"jsonrpc": "2.0", "id": "x", "method": "tasks/get", "params": {"id": []}},
    {"jsonrpc": "2.0", "id": 6, "method": "GetTask", "params": {"id": "no-such-task"}},
]


def test_each_malformed_a2a_request_is_one_line_in_the_log_without_a_traceback(
    tmp_path: Path,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "holodeck", "deploy", str(WEATHER), "--model", "test"]
    output = tmp_path / "server.out"
    with output.open("wb") as out:
        process = subprocess.Popen(
            [*command, "--port", str(port)],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:

            def up() -> bool:
                assert process.poll() is None, output.read_text()
                try:
                    return httpx.get(url + "/health", timeout=1).status_code == 200
                except httpx.TransportError:
                    return False

            def refused() -> list[str]:
                return [
                    line
                    for line in output.read_text().splitlines()
                    if "A2A request refused" in line
                ]

            until(up, timeout=120, what="holodeck deploy to serve")
            sent = [body if isinstance(body, str) else json.dumps(body) for body in MALFORMED]
            sent += [json.dumps({"jsonrpc": "2.0", "id": n, "method": f"m{n}"}) for n in range(20)]
            with httpx.Client(base_url=url, timeout=30) as client:
                for body in sent:
                    answer = client.post(
                        "/a2a/weather", content=body, headers={"Content-Type": "application/json"}
                    )
                    assert answer.status_code == 200 and "error" in answer.json(), answer.text
            until(lambda: len(refused()) >= len(sent), timeout=20, what="the refusals logged")
        finally:
            process.terminate()
            process.wait(20)
    said = output.read_text()
    assert "Traceback" not in said
    lines = refused()
    assert len(lines) == len(sent)
    assert "method=nonsense code=-32601 id=2 request_id=" in lines[4]
    assert "method=(not JSON) code=-32700 id=null" in lines[0]
    # nothing else: no warning of the protocol library's beside each line
    others = [
        line
        for line in said.splitlines()
        if line not in lines and not line.startswith(("INFO:", "holodeck: serving"))
    ]
    assert others == [], others[:5]
