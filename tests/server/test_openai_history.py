"""A client's tool-call history on `/v1/chat/completions`: an assistant's `tool_calls`
and the `tool` messages answering them reach the model as the conversation's calls and
results, in order; a conversation ending with tool results has the model go on from
them; a result answering no call, or a call left unanswered, is a 400 naming the
message. The official `openai` client talks over real HTTP to a `holodeck deploy`
process whose agent's model is a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from scripted_servers import OpenAIServer, text
from server_harness import agent_dir, deploy_process, function_tool

LOOKUP = '''
def lookup(city: str) -> str:
    """The weather in a city."""
    return "sunny (from the agent's own tool)"
'''

Deployed = tuple[openai.OpenAI, OpenAIServer]


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    root = tmp_path_factory.mktemp("openai-history")
    model = OpenAIServer().start()
    endpoint = {"provider": "openai", "name": "gpt-4o-mini", "endpoint": model.url}
    oracle = agent_dir(
        root / "oracle", "oracle", model=endpoint, python=LOOKUP, tools=[function_tool("lookup")]
    )
    env = {"OPENAI_API_KEY": "sk-test-1234", "HOLODECK_HOME": str(root / "home")}
    try:
        with deploy_process(str(oracle), env=env, cwd=root) as (_, url):
            yield openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0), model
    finally:
        model.stop()


def call(call_id: str, city: str) -> dict[str, Any]:
    arguments = json.dumps({"city": city})
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "lookup", "arguments": arguments},
    }


def exchange(call_id: str, city: str, result: str) -> list[Any]:
    """An assistant's call of `lookup` and the `tool` message answering it."""
    return [
        {"role": "assistant", "content": None, "tool_calls": [call(call_id, city)]},
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


def shape(sent: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The conversation the model was sent, past the instructions: (role, what)."""
    said: list[tuple[Any, ...]] = []
    for message in sent:
        if message["role"] == "tool":
            said.append(("tool", message["tool_call_id"], message["content"]))
        elif message.get("tool_calls"):
            for made in message["tool_calls"]:
                function = made["function"]
                said.append(
                    ("call", made["id"], function["name"], json.loads(function["arguments"]))
                )
        elif message["role"] != "system":
            said.append((message["role"], message["content"]))
    return said


def test_a_clients_tool_calls_and_results_reach_the_model_in_order(deployed: Deployed) -> None:
    client, model = deployed
    model.script(text("Oslo was rainy; Rome is warmer."))
    asked = len(model.requests)
    history: list[Any] = [
        {"role": "user", "content": "Weather in Oslo?"},
        *exchange("c1", "Oslo", "rainy"),
        {"role": "assistant", "content": "Rainy in Oslo."},
        {"role": "user", "content": "And compared with Rome?"},
    ]
    done = client.chat.completions.create(model="oracle", messages=history)
    assert done.choices[0].message.content == "Oslo was rainy; Rome is warmer."
    assert len(model.requests) == asked + 1  # the model answered; no tool ran here
    assert shape(model.requests[asked].body["messages"]) == [
        ("user", "Weather in Oslo?"),
        ("call", "c1", "lookup", {"city": "Oslo"}),
        ("tool", "c1", "rainy"),
        ("assistant", "Rainy in Oslo."),
        ("user", "And compared with Rome?"),
    ]


def test_a_conversation_ending_with_tool_results_goes_on_from_them(deployed: Deployed) -> None:
    """A client continuing a turn: the last assistant message called the agent's own
    tool, and the request ends with the results. The model answers from them (the agent
    does not run the calls again), streamed or not."""
    client, model = deployed
    model.script(text("Both are wet today."), text("Still wet."))
    asked = len(model.requests)
    history: list[Any] = [
        {"role": "user", "content": "Weather in Oslo and Bergen?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "Oslo"), call("c2", "Bergen")],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "rainy"},
        {"role": "tool", "tool_call_id": "c2", "content": "drizzle"},
    ]
    done = client.chat.completions.create(model="oracle", messages=history)
    assert done.choices[0].message.content == "Both are wet today."
    assert shape(model.requests[asked].body["messages"]) == [
        ("user", "Weather in Oslo and Bergen?"),
        ("call", "c1", "lookup", {"city": "Oslo"}),
        ("call", "c2", "lookup", {"city": "Bergen"}),
        ("tool", "c1", "rainy"),
        ("tool", "c2", "drizzle"),
    ]
    stream = client.chat.completions.create(model="oracle", messages=history, stream=True)
    pieces = [chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices]
    assert "".join(pieces) == "Still wet."
    assert len(model.requests) == asked + 2


def test_a_result_answering_no_call_or_a_call_left_unanswered_is_refused(
    deployed: Deployed,
) -> None:
    client, model = deployed
    asked = len(model.requests)
    question = {"role": "user", "content": "Weather?"}
    orphan = {"role": "tool", "tool_call_id": "c9", "content": "sunny"}
    unanswered = exchange("c1", "Oslo", "rainy")[:1]
    twice = [
        *exchange("c1", "Oslo", "rainy"),
        {"role": "tool", "tool_call_id": "c1", "content": "x"},
    ]
    cases: list[tuple[list[Any], str]] = [
        ([question, orphan, question], "messages.1"),
        ([question, orphan], "messages.1"),
        ([question, *unanswered, question], "messages.1"),
        ([question, *twice, question], "messages.3"),
    ]
    for messages, where in cases:
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(model="oracle", messages=messages)
        body = refused.value.body
        assert isinstance(body, dict)
        assert body["param"] == "messages"
        assert body["message"].startswith(where + ":"), body["message"]
    assert len(model.requests) == asked  # nothing reached the model


PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@pytest.fixture(scope="module")
def seer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    """An agent that takes images."""
    root = tmp_path_factory.mktemp("openai-history-images")
    model = OpenAIServer().start()
    seer = root / "seer"
    seer.mkdir()
    config = {
        "spec_version": 1,
        "name": "seer",
        "executor": {
            "model": "openai/gpt-4o-mini",
            "connection": {"api_key": "sk-x", "base_url": model.url},
        },
        "interaction": {"modalities": {"input": ["text", "image"]}},
    }
    (seer / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
    (seer / "AGENTS.md").write_text("You look at pictures.", encoding="utf-8")
    env = {"OPENAI_API_KEY": "sk-test-1234", "HOLODECK_HOME": str(root / "home")}
    try:
        with deploy_process(str(seer), env=env, cwd=root) as (_, url):
            yield openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0), model
    finally:
        model.stop()


def with_image(words: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": words},
            {"type": "image_url", "image_url": {"url": PIXEL}},
        ],
    }


def test_an_image_earlier_in_the_history_reaches_the_model_with_its_message(seer: Deployed) -> None:
    client, model = seer
    model.script(text("Still a red pixel."))
    asked = len(model.requests)
    history: list[Any] = [
        with_image("What is this?"),
        {"role": "assistant", "content": "A red pixel."},
        {"role": "user", "content": "Are you sure?"},
    ]
    done = client.chat.completions.create(model="seer", messages=history)
    assert done.choices[0].message.content == "Still a red pixel."
    first = next(m for m in model.requests[asked].body["messages"] if m["role"] == "user")
    kinds = [part["type"] for part in first["content"]]
    assert kinds == ["text", "image_url"]
    assert first["content"][1]["image_url"]["url"] == PIXEL


def test_an_image_in_the_history_of_a_text_only_agent_is_refused_by_message(
    deployed: Deployed,
) -> None:
    client, _ = deployed
    history: list[Any] = [
        with_image("What is this?"),
        {"role": "assistant", "content": "A pixel."},
        {"role": "user", "content": "Are you sure?"},
    ]
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="oracle", messages=history)
    error = refused.value.body
    assert isinstance(error, dict)
    assert error["param"] == "messages.0"
    assert "does not accept image input" in error["message"]
