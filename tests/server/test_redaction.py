"""A failing tool's exception text often quotes its arguments: with
`logging.redact_content: true` it is reported by its exception type alone, in the
server's request log, the tool-call events, the exported traces and logs. A trace's
redaction patterns reach a failed span's status message too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from holodeck.observability import shutdown_shared
from otlp_receiver import otlp_http
from server_harness import agent_dir, function_tool, log_lines, served

SECRET = "4111-1111-1111-1111"
TOOLS = f'''
def charge(city: str) -> str:
    """Charges the card on file."""
    raise ValueError("card {SECRET} declined for " + city)
'''


def _observability(endpoint: str, **traces: Any) -> dict[str, Any]:
    return {
        "enabled": True,
        "traces": {"schedule_delay_millis": 50, **traces},
        "exporters": {"otlp": {"endpoint": endpoint, "protocol": "http", "timeout_ms": 2000}},
    }


def test_redact_content_keeps_only_a_failed_tools_exception_type(
    tmp_path: Path, isolated_home: Path
) -> None:
    with otlp_http() as received:
        root = agent_dir(
            tmp_path / "agent",
            "payer",
            python=TOOLS,
            tools=[function_tool("charge")],
            logging={"redact_content": True, "log_level": "DEBUG"},
            observability=_observability(received.endpoint),
        )
        with served(root, state_dir=tmp_path / "state") as server:
            answer = server.chat("Pay for Oslo /call charge")
            assert answer.status_code == 200, answer.text
            streamed = server.events("Pay for Bergen /call charge")
        # the answer's and the stream's tool-call events
        assert [c["error"] for c in answer.json()["tool_calls"]] == ["ValueError"]
        finished = [data for name, data in streamed if data.get("error")]
        assert finished and {d["error"] for d in finished} == {"ValueError"}
        assert SECRET not in answer.text and SECRET not in json.dumps(streamed)
        # the request log
        lines = [x for x in log_lines(isolated_home, "payer") if x["endpoint"] == "/v1/chat"]
        assert len(lines) == 2
        assert [c["error"] for line in lines for c in line["tool_calls"]] == ["ValueError"] * 2
        assert SECRET not in json.dumps(lines)
        # the exported span of the call, and the warning logged with it
        received.wait_for(lambda r: any(s.name == "execute_tool charge" for s in r.spans))
        received.wait_for(lambda r: any("tool charge failed" in log.body for log in r.logs))
        span = next(s for s in received.spans if s.name == "execute_tool charge")
        assert (span.status_code, span.status_message) == (2, "ValueError")
        assert span.attributes["error.type"] == "ValueError"
        warning = next(log.body for log in received.logs if "tool charge failed" in log.body)
        assert warning == "tool charge failed: ValueError"
        assert SECRET not in repr(received.spans) + repr(received.logs)
        asyncio.run(shutdown_shared())


def test_without_redaction_the_error_is_whole_and_patterns_reach_the_status(
    tmp_path: Path,
) -> None:
    with otlp_http() as received:
        root = agent_dir(
            tmp_path / "agent",
            "payer",
            python=TOOLS,
            tools=[function_tool("charge")],
            observability=_observability(received.endpoint, redaction_patterns=[r"\d{4}-[\d-]+"]),
        )
        with served(root, state_dir=tmp_path / "state") as server:
            answer = server.chat("Pay for Oslo /call charge")
        (call,) = answer.json()["tool_calls"]
        assert call["error"].startswith(f"ValueError: card {SECRET} declined")
        received.wait_for(lambda r: any(s.name == "execute_tool charge" for s in r.spans))
        span = next(s for s in received.spans if s.name == "execute_tool charge")
        assert span.status_message.startswith("ValueError: card [REDACTED] declined")
        assert SECRET not in repr(received.spans)
        asyncio.run(shutdown_shared())
