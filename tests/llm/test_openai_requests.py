"""`lean_body` sends what the OpenAI SDK's own pass over a chat completion body would
send, for the bodies real turns make: tools, tool calls and their results, a history,
images, structured output, streamed and not. Each body is passed through both and
compared, over real HTTP to a scripted server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import scripted_servers
from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.llm.openai_requests import lean_body
from holodeck.runtime import Agent, Attachment
from scripted_servers import Call, OpenAIServer, text, tool_calls
from yaml_dump import dump

openai_server = scripted_servers.openai_server

TOOLS = '''
def get_weather(city: str, days: int = 1) -> dict:
    """Weather in a city.

    Args:
        city: City name.
        days: How many days ahead.
    """
    return {"city": city, "temperature_c": 21, "days": days}
'''


@pytest.fixture
def compared(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    """Every chat body sent meanwhile, as (lean, SDK's) pairs."""
    from openai._utils import maybe_transform as sdk_transform
    from openai.types.chat import completion_create_params as params

    from holodeck.llm import openai_requests

    lean = openai_requests.lean_body
    pairs: list[tuple[Any, Any]] = []

    def both(data: Any) -> Any:
        ours = lean(data)
        if isinstance(data, dict) and "messages" in data:  # a whole request's arguments
            kind = (
                params.CompletionCreateParamsStreaming
                if data.get("stream")
                else params.CompletionCreateParamsNonStreaming
            )
            pairs.append((ours, sdk_transform(data, kind)))
        return ours

    monkeypatch.setattr(openai_requests, "lean_body", both)
    return pairs


def agent(write: Write, server: OpenAIServer, **extra: Any) -> Agent:
    spec = {
        "name": "demo",
        "model": {
            "provider": "openai",
            "name": "gpt-4o-mini",
            "endpoint": server.url,
            "temperature": 0.2,
            "max_tokens": 300,
        },
        "instructions": {"inline": "Answer briefly."},
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "file": "tools.py",
                "function": "get_weather",
            }
        ],
        **extra,
    }
    root = write({"agent.yaml": dump(spec), "tools.py": TOOLS})
    return Agent(load_agent(root), RunOptions(env={"OPENAI_API_KEY": "sk-test"}))


def test_chat_bodies_are_what_the_sdk_would_send(
    write: Write, openai_server: OpenAIServer, compared: list[tuple[Any, Any]]
) -> None:
    openai_server.script(
        tool_calls(Call("get_weather", {"city": "Lisbon", "days": 2}, id="c1")),
        text("21 °C in Lisbon."),
        text("Still 21 °C."),
        tool_calls(Call("final_result", {"city": "Lisbon", "temperature_c": 21})),
        text("A cat."),
    )
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "temperature_c": {"type": "integer"}},
        "required": ["city", "temperature_c"],
    }

    async def turns() -> None:
        plain = agent(write, openai_server)
        async with plain, plain.session() as session:
            await session.answer("Weather in Lisbon?")  # tools, a call, its result (streamed)
            await session.answer("And now?", stream_text=False)  # a history, not streamed
        structured = agent(write, openai_server, response_format=schema)
        async with structured:
            await structured.answer("Weather in Lisbon as data")
        image = write(
            {
                "config.yaml": "spec_version: 1\nname: eyes\nllm: {model: openai/gpt-4o-mini}\n"
                "interaction: {modalities: {input: [text, image]}}\n"
            }
        )
        env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": openai_server.url}
        async with Agent(load_agent(image), RunOptions(env=env)) as eyes:
            picture = Attachment(b"\x89PNG\r\n\x1a\n", "image/png", "cat.png")
            await eyes.answer("What is this?", attachments=[picture])

    asyncio.run(turns())
    assert len(compared) == 5
    for ours, sdk in compared:
        assert ours == sdk
    sent = [r.body for r in openai_server.requests]
    assert any(m.get("role") == "tool" for m in sent[1]["messages"])
    assert isinstance(sent[4]["messages"][-1]["content"], list)  # the image part


def test_lean_body_drops_omitted_arguments_at_every_depth() -> None:
    from openai import NOT_GIVEN, omit

    body = {"a": NOT_GIVEN, "b": {"c": omit, "d": (1, 2)}, "e": [{"f": NOT_GIVEN}], "g": "s"}
    assert lean_body(body) == {"b": {"d": [1, 2]}, "e": [{}], "g": "s"}
