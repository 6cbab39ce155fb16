"""`holodeck test` exporting spans: each case's span carries what its model requests cost
(`holodeck.cost_usd`) when the model is priced, and no such attribute when it is not. The
model is a scripted OpenAI-compatible server answering with known token counts; the spans
go to the local OTLP receiver over HTTP."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path
from typing import Any

import scripted_servers
from cli_invoke import invoke
from conftest import Write
from holodeck.observability import shutdown_shared
from otlp_receiver import Received, Span, otlp_http
from scripted_servers import OpenAIServer, text
from yaml_dump import dump

openai_server = scripted_servers.openai_server

IN, OUT = 1000, 200  # tokens of every scripted answer
HOUSE_TURN = Decimal(IN * 3 + OUT * 15) / 1_000_000  # at $3 in, $15 out per million


def traced_agent(server: OpenAIServer, endpoint: str, **model: Any) -> dict[str, str]:
    spec = {
        "name": "priced",
        "model": {
            "provider": "openai",
            "name": "house-model",  # in no price list
            "endpoint": server.url,
            "api_key": "sk-x",
            **model,
        },
        "instructions": {"inline": "Answer briefly."},
        "execution": {"max_retries": 0},
        "test_cases": [{"name": "one", "input": "hi"}, {"name": "two", "input": "hello"}],
        "observability": {
            "enabled": True,
            "traces": {"schedule_delay_millis": 50},
            "exporters": {"otlp": {"endpoint": endpoint, "protocol": "http"}},
        },
    }
    return {"agent.yaml": dump(spec)}


def case_spans(received: Received) -> dict[str, Span]:
    def both(r: Received) -> bool:
        return {s.name for s in r.spans} >= {"test_case one", "test_case two"}

    received.wait_for(both)
    return {s.name: s for s in received.spans if s.name.startswith("test_case ")}


def test_each_case_s_span_carries_its_cost_from_the_cost_block(
    write: Write, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    with otlp_http() as received:
        cost = {"input_per_million": 3, "output_per_million": 15}
        root = write(traced_agent(openai_server, received.endpoint, cost=cost))
        openai_server.script(*(text("fine", input_tokens=IN, output_tokens=OUT) for _ in "12"))
        try:
            result = invoke("test", str(root), cwd=tmp_path)
            assert result.exit_code == 0, result.output
            spans = case_spans(received)
        finally:
            asyncio.run(shutdown_shared())

    for name in ("test_case one", "test_case two"):
        assert spans[name].attributes["holodeck.cost_usd"] == float(HOUSE_TURN)


def test_an_unpriced_model_s_case_spans_carry_no_cost(
    write: Write, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    with otlp_http() as received:
        root = write(traced_agent(openai_server, received.endpoint))
        openai_server.script(*(text("fine", input_tokens=IN, output_tokens=OUT) for _ in "12"))
        try:
            result = invoke("test", str(root), cwd=tmp_path)
            assert result.exit_code == 0, result.output
            spans = case_spans(received)
        finally:
            asyncio.run(shutdown_shared())

    for span in spans.values():
        assert span.attributes["holodeck.test.status"] == "pass"
        assert "holodeck.cost_usd" not in span.attributes
