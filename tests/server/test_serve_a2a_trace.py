"""An A2A turn is traced as a /v1/chat turn is: a SERVER span named for its endpoint, the
agent's span under it, and the request log line carrying both ids."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from holodeck.observability import shutdown_shared
from otlp_receiver import otlp_http
from server_harness import agent_dir, log_lines, served


@pytest.fixture(autouse=True)
def _own_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOLODECK_HOME", str(tmp_path / "home"))
    yield
    asyncio.run(shutdown_shared())


def test_an_a2a_turn_is_a_server_span_and_its_log_line_carries_the_ids(tmp_path: Path) -> None:
    with otlp_http() as received:
        observability = {
            "enabled": True,
            "traces": {"schedule_delay_millis": 50},
            "exporters": {"otlp": {"endpoint": received.endpoint, "protocol": "http"}},
        }
        root = agent_dir(tmp_path / "agent", "top", observability=observability)
        with served(root, state_dir=tmp_path / "state") as server:
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "message/send",
                "params": {
                    "message": {
                        "messageId": "m",
                        "role": "user",
                        "parts": [{"kind": "text", "text": "hi"}],
                    }
                },
            }
            reply = server.client.post("/a2a/top", json=body).json()
            request_id = reply["result"]["metadata"]["holodeck"]["request_id"]
        (line,) = [x for x in log_lines(tmp_path / "home", "top") if x["endpoint"] == "/a2a/top"]
        assert line["request_id"] == request_id
        received.wait_for(lambda r: any(s.span_id == line["span_id"] for s in r.spans))
        span = next(s for s in received.spans if s.span_id == line["span_id"])
        assert span.name == "/a2a/top" and span.trace_id == line["trace_id"]
        assert span.attributes["holodeck.request.id"] == request_id
        assert span.attributes["gen_ai.conversation.id"] == reply["result"]["contextId"]
        turn = next(s for s in received.spans if s.name == "invoke_agent top")
        assert turn.parent_id == span.span_id
