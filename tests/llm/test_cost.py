"""Cost in dollars wherever usage is reported: test reports, /v1/chat, the OpenAI routes,
the request log and spend caps, priced by a model's `cost:` block or the bundled price
list. The model is a scripted OpenAI-compatible server on 127.0.0.1 answering with known
token counts."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import openai
import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

import scripted_servers
from cli_invoke import invoke
from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.errors import LimitReached
from holodeck.runtime import Agent
from scripted_servers import OpenAIServer, text
from server_harness import Serve, log_lines
from yaml_dump import dump

openai_server = scripted_servers.openai_server

# a model no price list knows, priced by its `cost:` block
HOUSE_COST = {"input_per_million": 3, "output_per_million": 15}
IN, OUT = 1000, 200  # tokens of every scripted answer
HOUSE_TURN = Decimal(IN * 3 + OUT * 15) / 1_000_000  # $0.006


def agent(server: OpenAIServer, name: str = "house-model", **model: Any) -> dict[str, str]:
    spec = {
        "name": "priced",
        "model": {
            "provider": "openai",
            "name": name,
            "endpoint": server.url,
            "api_key": "sk-x",
            **model,
        },
        "instructions": {"inline": "Answer briefly."},
        "execution": {"max_retries": 0},
        "test_cases": [{"name": "one", "input": "hi"}, {"name": "two", "input": "hello"}],
    }
    return {"agent.yaml": dump(spec)}


def answers(server: OpenAIServer, n: int) -> None:
    server.script(*(text("fine", input_tokens=IN, output_tokens=OUT) for _ in range(n)))


def json_report(root: Path, cwd: Path) -> dict[str, Any]:
    result = invoke("test", str(root), "-o", "run.json", cwd=cwd)
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads((cwd / "run.json").read_text(encoding="utf-8"))
    return report


def test_a_cost_block_prices_an_unknown_model_in_every_report_format(
    write: Write, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    root = write(agent(openai_server, cost=HOUSE_COST))
    answers(openai_server, 2)

    report = json_report(root, tmp_path)

    assert [c["runs"][0]["cost_usd"] for c in report["cases"]] == [float(HOUSE_TURN)] * 2
    assert report["summary"]["cost_usd"] == float(2 * HOUSE_TURN)
    answers(openai_server, 8)
    for name in ("run.md", "run.junit.xml", "run.html"):
        assert invoke("test", str(root), "-o", name, cwd=tmp_path).exit_code == 0
    assert "| Cost | $0.012000 |" in (tmp_path / "run.md").read_text(encoding="utf-8")
    junit = (tmp_path / "run.junit.xml").read_text(encoding="utf-8")
    assert 'name="cost_usd" value="0.012"' in junit and "cost $0.006000" in junit
    assert "$0.012000" in (tmp_path / "run.html").read_text(encoding="utf-8")
    console = " ".join(invoke("test", str(root), cwd=tmp_path).output.split())
    assert "cost $0.012000" in console


def test_an_unknown_model_without_a_cost_block_has_no_cost_rather_than_zero(
    write: Write, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    root = write(agent(openai_server))
    answers(openai_server, 2)

    report = json_report(root, tmp_path)

    assert [c["runs"][0]["cost_usd"] for c in report["cases"]] == [None, None]
    assert report["summary"]["cost_usd"] is None


def test_a_known_model_is_priced_from_the_bundled_price_list(
    write: Write, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    root = write(agent(openai_server, name="gpt-4o-mini"))
    answers(openai_server, 2)
    listed = calc_price(
        PriceUsage(input_tokens=IN, output_tokens=OUT), "gpt-4o-mini", provider_id="openai"
    ).total_price

    report = json_report(root, tmp_path)

    assert listed > 0
    assert [c["runs"][0]["cost_usd"] for c in report["cases"]] == [float(listed)] * 2


def test_a_session_cost_cap_counts_the_cost_block_s_prices(
    write: Write, openai_server: OpenAIServer
) -> None:
    # two turns spend exactly the cap; the third is refused before it reaches the model
    limits = {"session": {"max_cost_usd": float(2 * HOUSE_TURN)}}
    spec = json.loads(json.dumps(agent(openai_server, cost=HOUSE_COST)))
    root = write({"agent.yaml": spec["agent.yaml"] + dump({"limits": limits})})
    answers(openai_server, 3)

    async def three_turns() -> list[object]:
        out: list[object] = []
        async with Agent(load_agent(root)) as running, running.session() as session:
            for prompt in ("one", "two", "three"):
                try:
                    out.append((await session.answer(prompt)).text)
                except LimitReached as exc:
                    out.append(exc)
            out.append(session.spend.cost)
        return out

    first, second, third, spent = asyncio.run(three_turns())

    assert (first, second) == ("fine", "fine")
    assert isinstance(third, LimitReached) and third.cap == "limits.session.max_cost_usd"
    assert "0.012" in third.message
    assert spent == 2 * HOUSE_TURN
    assert len(openai_server.requests) == 2


def test_served_answers_the_openai_routes_and_the_request_log_carry_the_cost(
    write: Write, openai_server: OpenAIServer, serve: Serve, isolated_home: Path
) -> None:
    root = write(agent(openai_server, cost=HOUSE_COST))
    answers(openai_server, 5)

    with serve(root, model=None) as server:
        answer = server.chat("hi").json()
        session = server.client.get(f"/v1/sessions/{answer['session_id']}").json()
        events = server.events("again")
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="none")
        completion = client.chat.completions.create(
            model="priced", messages=[{"role": "user", "content": "hi"}]
        )
        response = client.responses.create(model="priced", input="hi")
        chunks = list(
            client.chat.completions.create(
                model="priced",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
                stream_options={"include_usage": True},
            )
        )

    cost = float(HOUSE_TURN)
    assert answer["usage"]["cost_usd"] == cost
    assert answer["usage"]["input_tokens"] == IN
    assert session["usage"]["cost_usd"] == cost  # the conversation so far
    final = next(data for name, data in events if name == "final")
    assert final["usage"]["cost_usd"] == cost
    assert completion.usage is not None and completion.usage.model_extra == {"cost_usd": cost}
    assert response.usage is not None and response.usage.model_extra == {"cost_usd": cost}
    streamed = chunks[-1].usage
    assert streamed is not None and streamed.model_extra == {"cost_usd": cost}
    assert [line.get("cost_usd") for line in log_lines(isolated_home, "priced")] == [cost] * 5


def test_an_unpriced_served_answer_says_null_and_logs_no_cost(
    write: Write, openai_server: OpenAIServer, serve: Serve, isolated_home: Path
) -> None:
    root = write(agent(openai_server))
    answers(openai_server, 1)

    with serve(root, model=None) as server:
        answer = server.chat("hi").json()

    assert answer["usage"]["cost_usd"] is None
    assert "cost_usd" not in log_lines(isolated_home, "priced")[0]


@pytest.mark.parametrize("key", ["input_per_million", "output_per_million"])
def test_a_negative_price_is_refused_at_its_line(
    write: Write, openai_server: OpenAIServer, key: str
) -> None:
    root = write(agent(openai_server, cost={**HOUSE_COST, key: -1}))

    result = invoke("validate", str(root))

    assert result.exit_code != 0
    assert f"model.cost.{key}" in result.output and "agent.yaml:" in result.output
    assert "must be at least 0" in result.output
    assert "Traceback" not in result.output


def test_an_image_s_llm_block_takes_a_cost(write: Write, openai_server: OpenAIServer) -> None:
    config = {
        "spec_version": 1,
        "name": "priced",
        "llm": {"model": "openai/house-model", "cost": HOUSE_COST},
        "executor": {"connection": {"base_url": openai_server.url, "api_key": "sk-x"}},
    }
    root = write({"config.yaml": dump(config), "AGENTS.md": "Answer briefly.\n"})
    answers(openai_server, 1)

    async def one_turn() -> Decimal | None:
        async with Agent(load_agent(root)) as running, running.session() as session:
            await session.answer("hi")
            return session.spend.cost

    assert asyncio.run(one_turn()) == HOUSE_TURN


def test_the_served_turns_span_carries_its_cost(
    write: Write, openai_server: OpenAIServer, serve: Serve
) -> None:
    from holodeck.observability import shutdown_shared
    from otlp_receiver import otlp_http

    with otlp_http() as received:
        observability = {
            "enabled": True,
            "traces": {"schedule_delay_millis": 50},
            "exporters": {"otlp": {"endpoint": received.endpoint, "protocol": "http"}},
        }
        files = agent(openai_server, cost=HOUSE_COST)
        root = write({"agent.yaml": files["agent.yaml"] + dump({"observability": observability})})
        answers(openai_server, 1)
        try:
            with serve(root, model=None) as server:
                assert server.chat("hi").status_code == 200
            received.wait_for(lambda r: any(s.name == "/v1/chat" for s in r.spans))
            span = next(s for s in received.spans if s.name == "/v1/chat")
            assert span.attributes["holodeck.cost_usd"] == float(HOUSE_TURN)
        finally:
            asyncio.run(shutdown_shared())
