"""`type: a2a` tools: a remote agent (a second `holodeck deploy`) asked over A2A with the
a2a-sdk client, through the agent's outbound walls, shown as a tool call in chat, the
stream and `holodeck test`; and the same tool declared inline in an image."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

from holodeck.config.loader import load_agent
from holodeck.errors import HoloDeckError
from holodeck.net import OutboundPolicy
from holodeck.spec.models.tools import A2ATool
from holodeck.tools.a2a import Conversation, RemoteAgent
from local_http import LocalHTTPServer
from server_harness import REPO, Serve, agent_dir, deploy_process, log_lines
from yaml_dump import dump

KEY = "k-remote-secret"


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A second server: the agent `desk` behind the key KEY; its URL and HOLODECK_HOME."""
    root = tmp_path_factory.mktemp("remote")
    agent = agent_dir(
        root / "desk",
        "desk",
        description="Answers about the weather desk's rota.",
        deployment={"auth": {"type": "api_key", "api_keys": [{"name": "caller", "key": KEY}]}},
    )
    home = root / "home"
    with deploy_process(str(agent), "--model", "test", env={"HOLODECK_HOME": str(home)}) as (
        _,
        url,
    ):
        yield url, home


def caller(root: Path, url: str, allow: bool = True, key: str = "${DESK_KEY}") -> Path:
    tool = {
        "type": "a2a",
        "name": "desk",
        "url": url,
        "headers": {"Authorization": f"Bearer {key}"},
    }
    extra = {"network": {"allow": ["127.0.0.1"]}} if allow else {}
    return agent_dir(root, "caller", tools=[tool], **extra)


def test_the_tool_asks_the_remote_agent_and_the_call_shows_in_the_answer_and_the_stream(
    tmp_path: Path, serve: Serve, remote: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, home = remote
    monkeypatch.setenv("DESK_KEY", KEY)
    with serve(
        caller(tmp_path / "caller", url + "/a2a/desk/.well-known/agent-card.json")
    ) as server:
        answer = server.chat("Who is on the rota today? /call desk")
        assert answer.status_code == 200, answer.text
        (call,) = answer.json()["tool_calls"]
        assert call["name"] == "desk" and call["error"] is None
        assert call["args"]["message"] == "Who is on the rota today?"
        assert call["result"] == "Test answer to: Who is on the rota today?"

        events = server.events("Anyone on call tonight? /call desk")
        names = [name for name, _ in events]
        assert names[0] == "session" and names[-1] == "final"
        started = next(data for name, data in events if name == "tool_call_started")
        finished = next(data for name, data in events if name == "tool_call_finished")
        assert started["name"] == finished["name"] == "desk"
        assert finished["result"] == "Test answer to: Anyone on call tonight?"
    # the remote answered both over A2A, as the key it was given
    logged = [line for line in log_lines(home, "desk") if line["session_id"]]
    said = [(line["endpoint"], line["key"], line["message_input"]) for line in logged]
    assert ("/a2a/desk", "caller", "Who is on the rota today?") in said
    assert ("/a2a/desk", "caller", "Anyone on call tonight?") in said
    assert KEY not in json.dumps(log_lines(home, "desk"))


def test_the_base_url_finds_the_card_and_a_default_description_comes_from_it(
    tmp_path: Path, remote: tuple[str, Path]
) -> None:
    import asyncio

    from holodeck.net import OutboundPolicy
    from holodeck.runtime.toolsets import a2a_tool

    url, _ = remote
    tool = A2ATool(name="desk", url=url + "/a2a/desk", headers={"Authorization": f"Bearer {KEY}"})
    built = a2a_tool(tool, OutboundPolicy(allow_loopback=True))

    async def main() -> tuple[str | None, str]:
        assert built.prepare is not None
        definition = await built.prepare(None, built.tool_def)  # type: ignore[arg-type]
        assert definition is not None
        return definition.description, await built.function(message="hello there")  # type: ignore[call-arg]

    description, said = asyncio.run(main())
    assert description == "Answers about the weather desk's rota."
    assert said == "Test answer to: hello there"


def test_loopback_is_refused_unless_network_allows_it_and_a_wrong_key_says_so(
    tmp_path: Path, serve: Serve, remote: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = remote
    monkeypatch.setenv("DESK_KEY", KEY)
    with serve(caller(tmp_path / "walled", url + "/a2a/desk", allow=False)) as server:
        (call,) = server.chat("Rota? /call desk").json()["tool_calls"]
        assert "127.0.0.1 is a loopback address; allow it under network.allow" in call["error"]
    with serve(caller(tmp_path / "wrong", url + "/a2a/desk", key="k-wrong")) as server:
        (call,) = server.chat("Rota? /call desk").json()["tool_calls"]
        assert "401" in call["error"] and "desk" in call["error"]


def test_holodeck_test_calls_the_tool_when_a_case_expects_it(
    tmp_path: Path, remote: tuple[str, Path]
) -> None:
    url, _ = remote
    root = caller(tmp_path / "tested", url + "/a2a/desk")
    spec = root / "agent.yaml"
    cases = [{"name": "asks the desk", "input": "Who is on the rota?", "expected_tools": ["desk"]}]
    spec.write_text(
        spec.read_text(encoding="utf-8") + dump({"test_cases": cases}), encoding="utf-8"
    )
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "holodeck", "test", str(spec), "--model", "test", "-o", str(report)],
        cwd=REPO,
        env={**os.environ, "DESK_KEY": KEY},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["summary"]["passed"] == 1
    (case,) = data["cases"]
    (called,) = case["runs"][0]["turns"][0]["tool_calls"]
    assert called["name"] == "desk"
    assert called["result"] == "Test answer to: Who is on the rota?"


def test_an_image_declares_an_a2a_tool_inline(tmp_path: Path) -> None:
    image = tmp_path / "image"
    image.mkdir()
    (image / "AGENTS.md").write_text("You help.\n", encoding="utf-8")
    config = {
        "spec_version": 1,
        "name": "caller",
        "instructions": "AGENTS.md",
        "llm": {"model": "openai/gpt-4o-mini"},
        "tools": {
            "desk": {
                "type": "a2a",
                "url": "https://agents.example.com/a2a/desk",
                "headers": {"Authorization": "Bearer ${DESK_KEY}"},
                "timeout": 20,
            }
        },
    }
    (image / "config.yaml").write_text(dump(config), encoding="utf-8")
    spec = load_agent(image, environ={"DESK_KEY": "k-1"})
    (tool,) = spec.tools
    assert isinstance(tool, A2ATool)
    assert (tool.name, tool.url, tool.timeout) == (
        "desk",
        "https://agents.example.com/a2a/desk",
        20,
    )
    assert tool.headers["Authorization"].get_secret_value() == "Bearer k-1"

    config["tools"]["desk"]["url"] = "ftp://agents.example.com"  # type: ignore[index]
    (image / "config.yaml").write_text(dump(config), encoding="utf-8")
    with pytest.raises(HoloDeckError) as refused:
        load_agent(image, environ={"DESK_KEY": "k-1"})
    said = str(refused.value)
    assert "config.yaml:" in said and "tools.desk" in said and "http:// or https://" in said


def test_without_the_sdk_a_call_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from holodeck.net import OutboundPolicy
    from holodeck.runtime.toolsets import a2a_tool
    from holodeck.tools.a2a import A2ACallError

    for name in ("a2a", "a2a.client"):
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    built = a2a_tool(A2ATool(name="desk", url="http://127.0.0.1:9/a2a/desk"), OutboundPolicy())
    with pytest.raises(A2ACallError, match=r"pip install 'holodeck-agents\[a2a\]'"):
        asyncio.run(built.function(message="hi"))  # type: ignore[call-arg]


def test_holodeck_chat_lists_the_tool(tmp_path: Path) -> None:
    from holodeck.cli.chat.commands import tool_rows

    root = caller(tmp_path / "listed", "http://127.0.0.1:9/a2a/desk", key="k")
    assert tool_rows(load_agent(root / "agent.yaml")) == [
        ("desk", "a2a", "the A2A agent at http://127.0.0.1:9/a2a/desk")
    ]


def test_one_conversation_here_is_one_conversation_at_the_remote(
    tmp_path: Path, serve: Serve, remote: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two calls in one session reach the remote agent in one of its sessions (the
    contextId it gave is sent back); another session here is another session there."""
    url, home = remote
    monkeypatch.setenv("DESK_KEY", KEY)
    with serve(caller(tmp_path / "caller", url)) as server:
        first = server.chat("Rota for Monday? /call desk")
        assert first.status_code == 200, first.text
        session = first.json()["session_id"]
        again = server.chat("And for Tuesday? /call desk", session_id=session)
        assert again.status_code == 200, again.text
        other = server.chat("Rota for Friday? /call desk")
        assert other.status_code == 200, other.text
    remote_session = {
        line["message_input"]: line["session_id"]
        for line in log_lines(home, "desk")
        if line["session_id"] and line["endpoint"] == "/a2a/desk"
    }
    monday = remote_session["Rota for Monday?"]
    assert remote_session["And for Tuesday?"] == monday
    assert remote_session["Rota for Friday?"] != monday


class _AsksFirst(BaseHTTPRequestHandler):
    """A scripted A2A remote (JSON-RPC, 1.0 names): its card, then a task that asks
    which day and completes when the answer comes back in that task."""

    sent: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, value: dict[str, Any]) -> None:
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = f"http://127.0.0.1:{self.server.server_address[1]}/a2a"
        interface = {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        self._json({"name": "desk", "description": "Books rooms.", "version": "1",
                    "supportedInterfaces": [interface], "capabilities": {},
                    "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                    "skills": []})  # fmt: skip

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        message = request["params"]["message"]
        self.sent.append(message)
        if message.get("taskId") == "t1":
            state, text = "TASK_STATE_COMPLETED", f"Booked for {message['parts'][0]['text']}"
        else:
            state, text = "TASK_STATE_INPUT_REQUIRED", "Which day?"
        said = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": text}]}
        task = {"id": "t1", "contextId": "c1", "status": {"state": state, "message": said}}
        self._json({"jsonrpc": "2.0", "id": request["id"], "result": {"task": task}})


def test_a_remote_task_that_asks_for_input_gets_the_next_call_as_its_answer() -> None:
    """The model is given the remote's question; its next call answers that task, in the
    same remote conversation."""
    server = LocalHTTPServer(("127.0.0.1", 0), _AsksFirst)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/.well-known/agent-card.json"
        remote = RemoteAgent(A2ATool(type="a2a", name="desk", url=url),
                             OutboundPolicy(allow_loopback=True))  # fmt: skip
        conversation = Conversation()
        asked = asyncio.run(remote.ask("Book the big room", conversation))
        assert asked.endswith("asks: Which day?")
        assert asyncio.run(remote.ask("Tuesday", conversation)) == "Booked for Tuesday"
    finally:
        server.shutdown()
        server.server_close()
    first, second = _AsksFirst.sent
    assert "taskId" not in first and "contextId" not in first
    assert (second["taskId"], second["contextId"]) == ("t1", "c1")
