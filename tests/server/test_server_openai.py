"""The OpenAI-compatible endpoint, with the official `openai` package as the client and
the agent's own model a scripted OpenAI-compatible server: real SDKs, real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

import scripted_servers
from scripted_servers import OpenAIServer, text
from server_harness import Server, agent_dir, function_tool, served

openai_server = scripted_servers.openai_server

API_KEY = "sk-provider-secret-4242"


@pytest.fixture
def agent(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Server, OpenAIServer]]:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    tools = "def lookup(term: str) -> str:\n    return f'{term} is 42'\n"
    root = agent_dir(
        tmp_path / "oracle",
        "oracle",
        python=tools,
        tools=[function_tool("lookup")],
        model={"provider": "openai", "name": "gpt-4o-mini", "endpoint": openai_server.url},
        instructions={"inline": "You answer from lookups."},
    )
    with served(root, state_dir=tmp_path / "state", model=None) as server:
        yield server, openai_server


def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)


def sent_messages(body: Any) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in body["messages"] if isinstance(m["content"], str)]


def test_the_openai_sdk_lists_agents_as_models_and_gets_an_answer(
    agent: tuple[Server, OpenAIServer],
) -> None:
    server, model = agent
    assert [m.id for m in client(server).models.list()] == ["oracle"]
    model.script(text("The answer is 42.", input_tokens=30, output_tokens=6))
    completion = client(server).chat.completions.create(
        model="oracle",
        messages=[
            {"role": "user", "content": "What is x?"},
            {"role": "assistant", "content": "Which x?"},
            {"role": "user", "content": "The x."},
        ],
    )
    assert completion.choices[0].message.content == "The answer is 42."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.prompt_tokens == 30
    assert completion.usage.completion_tokens == 6
    # the agent's instructions first, then the conversation the client sent
    sent = sent_messages(model.requests[0].body)
    assert sent[0] == ("system", "You answer from lookups.")
    assert sent[1:] == [("user", "What is x?"), ("assistant", "Which x?"), ("user", "The x.")]
    assert "holodeck" not in (completion.model_extra or {})


def test_a_streamed_completion_arrives_in_chunks_with_usage(
    agent: tuple[Server, OpenAIServer],
) -> None:
    server, model = agent
    model.script(text("Forty two, as computed.", input_tokens=11, output_tokens=5))
    stream = client(server).chat.completions.create(
        model="oracle",
        messages=[{"role": "user", "content": "Compute"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    assert "".join(pieces) == "Forty two, as computed." and len(pieces) > 2
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 16


def test_tool_activity_is_reported_when_asked_for(agent: tuple[Server, OpenAIServer]) -> None:
    from scripted_servers import Call, tool_calls

    server, model = agent
    model.script(tool_calls(Call("lookup", {"term": "x"}, id="call_1")), text("x is 42."))
    completion = client(server).chat.completions.create(
        model="oracle",
        messages=[{"role": "user", "content": "x?"}],
        extra_body={"holodeck": {"tool_calls": True}},
    )
    activity = (completion.model_extra or {})["holodeck"]
    (call,) = activity["tool_calls"]
    assert (call["name"], call["args"], call["result"]) == ("lookup", {"term": "x"}, "x is 42")
    model.script(tool_calls(Call("lookup", {"term": "y"}, id="call_2")), text("y is 42."))
    stream = client(server).chat.completions.create(
        model="oracle",
        messages=[{"role": "user", "content": "y?"}],
        stream=True,
        extra_body={"holodeck": {"tool_calls": True}},
    )
    extras = [c.model_extra.get("holodeck") for c in stream if c.model_extra]
    assert [e["tool_call"]["name"] for e in extras if e] == ["lookup"]


def test_a_stored_session_continues_through_the_extension(
    agent: tuple[Server, OpenAIServer],
) -> None:
    server, model = agent
    model.script(text("Noted."), text("You said hello."))
    ask = client(server).chat.completions.create
    ask(
        model="oracle",
        messages=[{"role": "user", "content": "hello"}],
        extra_body={"holodeck": {"session_id": "s-1"}},
    )
    ask(
        model="oracle",
        messages=[{"role": "user", "content": "what did I say?"}],
        extra_body={"holodeck": {"session_id": "s-1"}},
    )
    sent = sent_messages(model.requests[1].body)
    assert ("user", "hello") in sent and ("assistant", "Noted.") in sent
    history = server.client.get("/v1/sessions/s-1").json()["messages"]
    assert [m["content"] for m in history if m["role"] == "user"] == ["hello", "what did I say?"]


def test_the_sdk_gets_its_errors_with_the_servers_message(
    agent: tuple[Server, OpenAIServer],
) -> None:
    server, _ = agent
    with pytest.raises(openai.NotFoundError, match="no agent named 'gpt-4o'"):
        client(server).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
    with pytest.raises(openai.BadRequestError, match="its definition"):
        client(server).chat.completions.create(
            model="oracle",
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
        )
    with pytest.raises(openai.BadRequestError, match="must be the user's"):
        client(server).chat.completions.create(
            model="oracle", messages=[{"role": "assistant", "content": "hi"}]
        )


def test_a_model_provider_failure_is_a_502_naming_the_provider(
    agent: tuple[Server, OpenAIServer],
) -> None:
    from scripted_servers import unauthorized

    server, model = agent
    model.script(unauthorized())
    response = server.chat("hi")
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["type"] == "model_error" and "openai/gpt-4o-mini" in error["message"]
    assert API_KEY not in response.text


def test_no_secret_reaches_the_request_log(
    agent: tuple[Server, OpenAIServer], isolated_home: Path
) -> None:
    server, model = agent
    model.script(text("fine"))
    server.client.post(
        "/v1/chat", json={"message": "hi"}, headers={"Authorization": f"Bearer {API_KEY}"}
    )
    logs = "".join(p.read_text() for p in (isolated_home / "logs").iterdir())
    assert '"message_input": "hi"' in logs and API_KEY not in logs
