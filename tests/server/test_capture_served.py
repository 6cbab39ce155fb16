"""`holodeck test capture --from-session`: a conversation served by a real `holodeck deploy`
(with API keys, sessions in its SQLite store, the model a scripted OpenAI endpoint whose
exchanges the server records to a cassette) becomes a test case that replays offline
and passes; another key cannot capture it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest

from conftest import Write
from scripted_servers import Call, OpenAIServer, text, tool_calls
from server_harness import deploy_process

FAKE_KEY = "sk-capture-test-0123456789abcdef"
ALICE, BOB = "alice-key-0123456789", "bob-key-0123456789"

AGENT = """
name: desk
model: {provider: openai, name: gpt-4o-mini}
instructions: {inline: You answer questions about orders. Use the tools.}
tools:
  - {type: function, name: order_status, file: tools.py, function: order_status}
memory: {store: sqlite}
deployment:
  auth:
    type: api_key
    api_keys:
      - {name: alice, key: alice-key-0123456789}
      - {name: bob, key: bob-key-0123456789}
evaluations:
  metrics:
    - {metric: contains, threshold: 1}
test_cases_file: cases.yaml
"""
TOOLS = '''
def order_status(order_id: str) -> str:
    """The status of an order.

    Args:
        order_id: The order's number.
    """
    return f"order {order_id}: shipped"
'''
CASES = "# cases kept from real conversations\n"


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    served = OpenAIServer()
    served.start()
    try:
        yield served
    finally:
        served.stop()


def holodeck(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "holodeck", *args],
        cwd=cwd,
        # the key is only the one given
        env={**{k: v for k, v in os.environ.items() if k != "HOLODECK_API_KEY"}, **env},
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_a_served_session_is_captured_by_its_key_and_replays_offline(
    write: Write, tmp_path: Path, server: OpenAIServer, isolated_home: Path
) -> None:
    agent = write({"agent.yaml": AGENT, "tools.py": TOOLS, "cases.yaml": CASES})
    cassette = tmp_path / "served.yaml"
    server.script(
        tool_calls(Call("order_status", {"order_id": "1042"})),
        text("Order 1042 has shipped."),
        text("You are welcome."),
    )
    served_env = {
        "OPENAI_API_KEY": FAKE_KEY,
        "OPENAI_BASE_URL": server.url,
        "HOLODECK_RECORD": str(cassette),
    }
    with deploy_process(str(agent), cwd=tmp_path, env=served_env) as (_, url):
        alice = {"Authorization": f"Bearer {ALICE}"}
        first = httpx.post(
            f"{url}/v1/chat", json={"message": "Where is order 1042?"}, headers=alice, timeout=60
        )
        assert first.status_code == 200, first.text
        session_id = first.json()["session_id"]
        second = httpx.post(
            f"{url}/v1/chat",
            json={"message": "Thanks!", "session_id": session_id},
            headers=alice,
            timeout=60,
        )
        assert second.status_code == 200, second.text

    # bob did not start the session: refused, said plainly
    refused = holodeck(
        "test",
        "capture",
        str(agent),
        "--from-session",
        session_id,
        cwd=tmp_path,
        env={"HOLODECK_API_KEY": BOB},
    )
    assert refused.returncode == 2, refused.stderr
    assert f"session {session_id!r} of desk belongs to another API key" in refused.stderr
    assert "Traceback" not in refused.stderr

    for session, env, said in [
        ("nope", {"HOLODECK_API_KEY": ALICE}, "no session 'nope' of desk in its store"),
        (session_id, {"HOLODECK_API_KEY": "guess"}, "the API key is not one of desk's keys"),
        (session_id, {}, "desk is served with API keys"),
    ]:
        wrong = holodeck(
            "test", "capture", str(agent), "--from-session", session, cwd=tmp_path, env=env
        )
        assert wrong.returncode == 2, wrong.stderr
        assert said in wrong.stderr
        assert "Traceback" not in wrong.stderr

    captured = holodeck(
        "test",
        "capture",
        str(agent),
        "--from-session",
        session_id,
        "--name",
        "order-1042",
        "-o",
        str(agent / "agent.yaml"),
        cwd=tmp_path,
        env={"HOLODECK_API_KEY": ALICE},
    )
    assert captured.returncode == 0, captured.stderr
    # agent.yaml names its cases file: the case went there, after what it held
    cases = (agent / "cases.yaml").read_text(encoding="utf-8")
    assert cases.startswith(CASES)
    assert "order_id: '1042'" in cases
    assert "ground_truth: Order 1042 has shipped." in cases

    # the served turns, sampled from the request log the server wrote
    log = isolated_home / "logs" / "agent-desk.log"
    sampled = holodeck(
        "test",
        "capture",
        "--from-log",
        str(log),
        "--sample",
        "5",
        "--since",
        "1h",
        cwd=tmp_path,
        env={},
    )
    assert sampled.returncode == 0, sampled.stderr
    assert "- name: where-is-order-1042\n  input: Where is order 1042?" in sampled.stdout
    assert "ground_truth: Order 1042 has shipped." in sampled.stdout
    assert "- name: thanks\n  input: Thanks!" in sampled.stdout

    # replayed: no model is reached (the scripted endpoint is gone)
    server.stop()
    replayed = holodeck(
        "test",
        str(agent),
        "--replay",
        str(cassette),
        cwd=tmp_path,
        env={"OPENAI_API_KEY": FAKE_KEY, "OPENAI_BASE_URL": server.url},
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "PASS  order-1042" in replayed.stdout
