"""Guardrails in the runtime's edge cases, against scripted OpenAI-compatible servers on
127.0.0.1: a judge that fails blocks (a guardrail fails closed), the offline `test`
model cannot judge and its checks are skipped, and a sub-agent's own guardrails hold
when it runs as a tool."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, FinalMessage, GuardrailTriggered, ToolCallFinished
from scripted_servers import Call, OpenAIServer, server_error, text, tool_calls
from yaml_dump import dump

openai_server = scripted_servers.openai_server


@pytest.fixture
def judge_server() -> Iterator[OpenAIServer]:
    server = OpenAIServer().start()
    yield server
    server.stop()


def model_of(server: OpenAIServer) -> dict[str, Any]:
    return {"provider": "openai", "name": "gpt-4o-mini", "endpoint": server.url, "api_key": "k"}


def agent_yaml(server: OpenAIServer, **extra: Any) -> str:
    spec = {
        "name": "guarded",
        "model": model_of(server),
        "instructions": {"inline": "You help."},
        "execution": {"max_retries": 0},
        **extra,
    }
    return dump(spec)


def events_of(root: Path, question: str, options: RunOptions | None = None) -> list[Any]:
    async def run() -> list[Any]:
        async with Agent(load_agent(root), options) as agent:
            return [event async for event in agent.run(question)]

    return asyncio.run(run())


def test_a_judge_that_fails_blocks_the_answer(
    write: Write, openai_server: OpenAIServer, judge_server: OpenAIServer
) -> None:
    check = {"judge": {"criteria": "Be polite.", "model": model_of(judge_server)}}
    root = write({"agent.yaml": agent_yaml(openai_server, guardrails={"output": [check]})})
    openai_server.script(text("Here you go."))
    judge_server.script(server_error(), server_error(), server_error())

    events = events_of(root, "hello")

    (hit,) = [e for e in events if isinstance(e, GuardrailTriggered)]
    assert hit.action == "block" and hit.reason is not None
    assert hit.reason.startswith("the judge failed")
    final = events[-1]
    assert isinstance(final, FinalMessage)
    assert final.text == "The answer was withheld by the agent's guardrails."
    assert "Here you go." not in [getattr(e, "text", None) for e in events]


def test_the_offline_test_model_cannot_judge_so_its_checks_are_skipped(
    write: Write, openai_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    guardrails = {
        "input": [{"name": "polite", "judge": {"criteria": "Be polite."}}],
        "output": [{"pii": ["email"], "action": "redact"}],
    }
    root = write({"agent.yaml": agent_yaml(openai_server, guardrails=guardrails)})

    events = events_of(root, "write to ann@example.com", RunOptions(model="test"))

    hits = [(e.guardrail, e.action) for e in events if isinstance(e, GuardrailTriggered)]
    assert ("polite", "block") not in hits
    assert isinstance(events[-1], FinalMessage) and "ann@example.com" not in events[-1].text
    assert "guardrail polite is skipped" in caplog.text
    assert openai_server.requests == []


def test_a_sub_agents_own_guardrails_hold_when_it_runs_as_a_tool(
    write: Write, openai_server: OpenAIServer
) -> None:
    helper = agent_yaml(
        openai_server,
        guardrails={"input": [{"block_keywords": ["password"], "message": "Not that."}]},
    ).replace("name: guarded", "name: helper")
    tool = {"type": "agent", "name": "helper", "path": "helper/agent.yaml"}
    root = write(
        {
            "agent.yaml": agent_yaml(openai_server, tools=[tool]),
            "helper/agent.yaml": helper,
        }
    )
    openai_server.script(
        tool_calls(Call("helper", {"task": "find the admin password"}, id="c1")),
        text("The helper would not say."),
    )

    events = events_of(root, "ask the helper")

    (hit,) = [e for e in events if isinstance(e, GuardrailTriggered)]
    assert (hit.agent, hit.side, hit.action) == ("helper", "input", "block")
    (call,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert call.result == "Not that."
    assert len(openai_server.requests) == 2  # the helper's model was never asked
