"""Walls against hostile and careless input, round three: uploads that fail to start, MCP
clients that hang up, JSON nested without end, A2A refusals in the log, and YAML flow
collections nested thousands deep."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agui_client import run_input
from server_harness import WEATHER, Serve

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
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "holodeck", "validate", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        took = time.monotonic() - started
        said = done.stdout + done.stderr
        assert done.returncode == 2, said
        assert "agent.yaml:4: error: values nest more than 100 levels deep" in said
        assert "recursion" not in said and "Traceback" not in said
        assert took < 10, f"{depth} levels took {took:.1f} s"


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
                assert error["type"] == "too_deep", (path, depth, error)
                assert "more than 100" in error["message"]
        # brackets inside strings nest nothing; a body within the limit is answered
        said = server.chat("[" * 5_000 + ' \\"{', session_id="brackets")
        assert said.status_code == 200, said.text
        within = _with({**run_input("t-2", "Hi"), "forwardedProps": "DEEP"}, _nested(90))
        answer = server.client.post(
            "/awp", content=within, headers={"Content-Type": "application/json"}
        )
        assert answer.status_code == 200, answer.text
