"""Every provider path over real HTTP: the real OpenAI and Anthropic SDKs talk to
scripted servers on 127.0.0.1, and each test checks what the agent streamed and what
the SDK put on the wire (key, model, sampling settings, tools, tool results)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.config.settings import load_settings
from holodeck.llm.errors import ProviderError
from holodeck.runtime import (
    Agent,
    Event,
    FinalMessage,
    ModelOutputError,
    Session,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from scripted_servers import (
    AnthropicServer,
    Call,
    Fail,
    OpenAIServer,
    Recorded,
    ScriptedServer,
    closed_port_url,
    delay,
    not_found,
    rate_limited,
    server_error,
    text,
    tool_calls,
    unauthorized,
)
from yaml_dump import dump

openai_server = scripted_servers.openai_server
anthropic_server = scripted_servers.anthropic_server

INSTRUCTIONS = "You are terse. Answer in one sentence."
WEATHER_TOOL = '''
def get_weather(city: str) -> dict:
    """Current temperature in a city.

    Args:
        city: City name, e.g. Lisbon.
    """
    return {"city": city, "temperature_c": 21}
'''
MEET_TOOL = '''
import asyncio

_ARRIVED: dict[str, asyncio.Event] = {}


def _arrival(name: str) -> asyncio.Event:
    return _ARRIVED.setdefault(name, asyncio.Event())


async def meet(me: str, other: str) -> str:
    """Arrive, then wait (at most 5 s) until `other` has arrived too.

    Args:
        me: who arrives
        other: who to wait for
    """
    _arrival(me).set()
    await asyncio.wait_for(_arrival(other).wait(), timeout=5)
    return f"{me} met {other}"
'''
WEATHER_TOOL_ENTRY = {
    "type": "function",
    "name": "get_weather",
    "file": "tools/weather.py",
    "function": "get_weather",
}


# --- helpers ---------------------------------------------------------------------------


def agent_yaml(model: dict[str, Any], **extra: Any) -> str:
    return dump({"name": "demo", "model": model, "instructions": {"inline": INSTRUCTIONS}, **extra})


def build(root: Path, **options: Any) -> Agent:
    """The agent at `root` with the settings a run reads (global and project config.yaml),
    built (as opening it does), so that a provider's problems surface here."""
    spec = load_agent(root)
    project = root if (root / "agent.yaml").is_file() else None
    settings = load_settings(project).settings
    agent = Agent(spec, RunOptions(settings=settings, **options))
    agent.prepare()
    return agent


def turn(agent: Agent | Session, prompt: str = "What is the weather in Lisbon?") -> list[Event]:
    async def collect() -> list[Event]:
        return [event async for event in agent.run(prompt)]

    return asyncio.run(collect())


def failure(agent: Agent) -> BaseException:
    with pytest.raises((ProviderError, ModelOutputError)) as caught:
        turn(agent)
    error: BaseException = caught.value
    return error


def final(events: list[Event]) -> FinalMessage:
    assert isinstance(events[-1], FinalMessage), events
    return events[-1]


def of_type(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def assert_user_message(message: str) -> None:
    """What a user sees: one line, no Python internals."""
    assert "\n" not in message, message
    assert "Traceback" not in message, message
    assert 'File "' not in message, message


def bearer(record: Recorded) -> str | None:
    value = record.headers.get("authorization", "")
    return value.removeprefix("Bearer ") if value.startswith("Bearer ") else None


def anthropic_key(record: Recorded) -> str | None:
    """Anthropic keys travel as x-api-key, or as a Bearer token in newer SDKs."""
    return record.headers.get("x-api-key") or bearer(record)


# --- OpenAI: streaming, settings on the wire -------------------------------------------


def test_openai_streams_text_then_usage_then_final_with_the_agent_settings(
    write: Write, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_OPENAI_KEY", "sk-from-agent-yaml")
    root = write(
        {
            "agent.yaml": agent_yaml(
                {
                    "provider": "openai",
                    "name": "gpt-4o-mini",
                    "endpoint": openai_server.url,
                    "api_key": "${TEAM_OPENAI_KEY}",
                    "temperature": 0.3,
                    "max_tokens": 123,
                    "top_p": 0.9,
                }
            )
        }
    )
    openai_server.script(text("It is sunny in Lisbon.", input_tokens=21, output_tokens=5))

    events = turn(build(root))

    deltas = of_type(events, TextDelta)
    assert len(deltas) >= 3
    assert "".join(d.text for d in deltas) == "It is sunny in Lisbon."
    assert isinstance(events[-2], Usage) and isinstance(events[-1], FinalMessage)
    assert events[: len(deltas)] == deltas  # text first, as it arrives
    assert events[-2] == Usage(input_tokens=21, output_tokens=5, requests=1)
    assert final(events).text == "It is sunny in Lisbon."
    assert final(events).usage == events[-2]

    (request,) = openai_server.requests
    assert request.path == "/v1/chat/completions"
    assert bearer(request) == "sk-from-agent-yaml"
    body = request.body
    assert body["model"] == "gpt-4o-mini"
    assert body["stream"] is True
    assert body["messages"][0] == {"role": "system", "content": INSTRUCTIONS}
    assert body["messages"][-1] == {"role": "user", "content": "What is the weather in Lisbon?"}
    assert body["temperature"] == 0.3
    assert body["top_p"] == 0.9
    assert body["max_completion_tokens"] == 123


def test_conversation_history_is_sent_on_the_next_turn(
    write: Write, openai_server: OpenAIServer
) -> None:
    model = {"provider": "openai", "name": "gpt-4o-mini", "endpoint": openai_server.url}
    agent = build(write({"agent.yaml": agent_yaml(model)}))
    openai_server.script(text("Lisbon is sunny."), text("Yes, take sunglasses."))

    async def two_turns() -> None:
        async with agent, agent.session() as session:
            for prompt in ("Weather in Lisbon?", "Do I need sunglasses?"):
                [_ async for _ in session.run(prompt)]

    asyncio.run(two_turns())

    messages = openai_server.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["content"] == "Lisbon is sunny."


# --- tools ---------------------------------------------------------------------------


def test_openai_tool_call_round_trip(write: Write, openai_server: OpenAIServer) -> None:
    root = write(
        {
            "agent.yaml": agent_yaml(
                {"provider": "openai", "name": "gpt-4o-mini", "endpoint": openai_server.url},
                tools=[WEATHER_TOOL_ENTRY],
            ),
            "tools/weather.py": WEATHER_TOOL,
        }
    )
    openai_server.script(
        tool_calls(Call("get_weather", {"city": "Lisbon"}, id="call_w1"), output_tokens=9),
        text("It is 21 °C in Lisbon.", input_tokens=40, output_tokens=8),
    )

    events = turn(build(root))

    started, finished = of_type(events, ToolCallStarted), of_type(events, ToolCallFinished)
    assert len(started) == len(finished) == 1
    assert (started[0].call_id, started[0].name, started[0].args) == (
        "call_w1",
        "get_weather",
        {"city": "Lisbon"},
    )
    call = finished[0]
    assert (call.name, call.args, call.error) == ("get_weather", {"city": "Lisbon"}, None)
    assert call.result == {"city": "Lisbon", "temperature_c": 21}
    assert call.duration_ms >= 0
    assert (
        events.index(started[0]) < events.index(call) < events.index(of_type(events, TextDelta)[0])
    )
    answer = final(events)
    assert answer.text == "It is 21 °C in Lisbon."
    assert answer.tool_calls == (call,)
    assert answer.usage == Usage(input_tokens=51, output_tokens=17, requests=2)

    first, second = openai_server.bodies()
    (tool,) = first["tools"]
    assert tool["function"]["name"] == "get_weather"
    assert tool["function"]["description"] == "Current temperature in a city."
    assert tool["function"]["parameters"]["properties"]["city"]["type"] == "string"
    assert tool["function"]["parameters"]["required"] == ["city"]
    assistant, result = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "call_w1"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"city": "Lisbon"}
    assert result["role"] == "tool" and result["tool_call_id"] == "call_w1"
    assert json.loads(result["content"]) == {"city": "Lisbon", "temperature_c": 21}


def test_parallel_tool_calls_run_concurrently(write: Write, openai_server: OpenAIServer) -> None:
    """Each call waits until the other has started: only concurrent calls can both finish."""
    root = write(
        {
            "agent.yaml": agent_yaml(
                {"provider": "openai", "name": "gpt-4o-mini", "endpoint": openai_server.url},
                tools=[
                    {
                        "type": "function",
                        "name": "meet",
                        "file": "tools/meet.py",
                        "function": "meet",
                    }
                ],
            ),
            "tools/meet.py": MEET_TOOL,
        }
    )
    openai_server.script(
        tool_calls(
            Call("meet", {"me": "ana", "other": "bo"}, id="call_a"),
            Call("meet", {"me": "bo", "other": "ana"}, id="call_b"),
        ),
        text("They met."),
    )

    events = turn(build(root))

    finished = {e.call_id: e for e in of_type(events, ToolCallFinished)}
    assert {k: (v.error, v.result) for k, v in finished.items()} == {
        "call_a": (None, "ana met bo"),
        "call_b": (None, "bo met ana"),
    }
    started = of_type(events, ToolCallStarted)
    assert {s.call_id for s in started} == {"call_a", "call_b"}
    first_finish = min(events.index(f) for f in finished.values())
    assert all(events.index(s) < first_finish for s in started)
    results = [m for m in openai_server.bodies()[1]["messages"] if m["role"] == "tool"]
    assert {(m["tool_call_id"], m["content"]) for m in results} == {
        ("call_a", "ana met bo"),
        ("call_b", "bo met ana"),
    }
    assert final(events).text == "They met."


def test_prompt_tool_asks_the_model_without_streaming(
    write: Write, openai_server: OpenAIServer
) -> None:
    root = write(
        {
            "agent.yaml": agent_yaml(
                {"provider": "openai", "name": "gpt-4o-mini", "endpoint": openai_server.url},
                tools=[
                    {
                        "type": "prompt",
                        "name": "summarise",
                        "description": "Summarise a text.",
                        "template": "Summarise in five words: {{ passage }}",
                        "parameters": {"passage": {"type": "string"}},
                    }
                ],
            )
        }
    )
    openai_server.script(
        tool_calls(Call("summarise", {"passage": "A very long report."}, id="call_s")),
        text("Report is long, very long.", input_tokens=5, output_tokens=6),
        text("Summary: it is long."),
    )

    events = turn(build(root))

    (call,) = of_type(events, ToolCallFinished)
    assert (call.result, call.error) == ("Report is long, very long.", None)
    _, prompt, last = openai_server.bodies()
    assert not prompt.get("stream")
    assert prompt["messages"] == [
        {"role": "user", "content": "Summarise in five words: A very long report."}
    ]
    assert last["messages"][-1]["content"] == "Report is long, very long."
    assert final(events).usage.requests == 3  # the prompt tool's request is counted


def test_prompt_tool_request_honours_the_model_timeout(
    write: Write, openai_server: OpenAIServer
) -> None:
    root = write(
        {
            "agent.yaml": agent_yaml(
                {"provider": "openai", "name": "gpt-4o-mini", "endpoint": openai_server.url},
                tools=[
                    {
                        "type": "prompt",
                        "name": "summarise",
                        "description": "Summarise a text.",
                        "template": "Summarise: {{ passage }}",
                        "parameters": {"passage": {"type": "string"}},
                    }
                ],
                execution={"model_timeout": 0.5, "max_retries": 0},
            )
        }
    )
    openai_server.script(
        tool_calls(Call("summarise", {"passage": "text"})),
        delay(1.5, then=text("too late")),
        text("done"),
    )

    (call,) = of_type(turn(build(root)), ToolCallFinished)

    assert call.error is not None and "timed out" in call.error.lower()


# --- credentials -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("in_agent", "in_env", "in_global", "in_project", "expected"),
    [
        (None, "sk-env", None, None, "sk-env"),
        (None, None, "sk-global", None, "sk-global"),
        (None, None, "sk-global", "sk-project", "sk-project"),
        (None, "sk-env", "sk-global", "sk-project", "sk-env"),
        ("sk-agent", "sk-env", "sk-global", "sk-project", "sk-agent"),
    ],
    ids=["env", "global-config", "project-over-global", "env-over-config", "agent-over-all"],
)
def test_key_precedence_reaches_the_server(
    write: Write,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    isolated_home: Path,
    in_agent: str | None,
    in_env: str | None,
    in_global: str | None,
    in_project: str | None,
    expected: str,
) -> None:
    model: dict[str, Any] = {
        "provider": "openai",
        "name": "gpt-4o-mini",
        "endpoint": openai_server.url,
    }
    if in_agent:
        monkeypatch.setenv("AGENT_KEY", in_agent)
        model["api_key"] = "${AGENT_KEY}"
    if in_env:
        monkeypatch.setenv("OPENAI_API_KEY", in_env)
    if in_global:
        (isolated_home / "config.yaml").write_text(
            dump({"providers": {"openai": {"api_key": in_global}}}), encoding="utf-8"
        )
    files = {"agent.yaml": agent_yaml(model)}
    if in_project:
        files["config.yaml"] = dump({"providers": {"openai": {"api_key": in_project}}})
    openai_server.script(text("ok"))

    assert final(turn(build(write(files)))).text == "ok"

    assert bearer(openai_server.requests[0]) == expected


def test_endpoint_and_key_from_global_config_alone(
    write: Write, openai_server: OpenAIServer, isolated_home: Path
) -> None:
    (isolated_home / "config.yaml").write_text(
        dump({"providers": {"openai": {"api_key": "sk-cfg", "endpoint": openai_server.url}}}),
        encoding="utf-8",
    )
    root = write({"agent.yaml": agent_yaml({"provider": "openai", "name": "gpt-4o-mini"})})
    openai_server.script(text("ok"))

    assert final(turn(build(root))).text == "ok"
    assert bearer(openai_server.requests[0]) == "sk-cfg"


@pytest.mark.parametrize("provider", ["openai-compatible", "ollama"])
def test_local_servers_need_no_key(
    write: Write, openai_server: OpenAIServer, provider: str
) -> None:
    model = {"provider": provider, "name": "llama3.2", "endpoint": openai_server.url}
    openai_server.script(text("Hi from a local model."))

    events = turn(build(write({"agent.yaml": agent_yaml(model)})))

    assert final(events).text == "Hi from a local model."
    (request,) = openai_server.requests
    assert request.body["model"] == "llama3.2"
    assert request.body["messages"][0]["content"] == INSTRUCTIONS


def test_ollama_never_receives_the_openai_key(
    write: Write, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    monkeypatch.setenv("OLLAMA_BASE_URL", openai_server.url)
    root = write({"agent.yaml": agent_yaml({"provider": "ollama", "name": "llama3.2"})})
    openai_server.script(text("ok"))

    assert final(turn(build(root))).text == "ok"
    assert "sk-real-openai-key" not in json.dumps(openai_server.requests[0].headers)


def test_named_provider_entry_in_config_yaml(
    write: Write, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entry's endpoint and key win over OPENAI_* meant for api.openai.com."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    monkeypatch.setenv("OPENAI_BASE_URL", closed_port_url())
    root = write(
        {
            "agent.yaml": agent_yaml({"provider": "local", "name": "qwen2.5", "temperature": 0}),
            "config.yaml": dump(
                {
                    "providers": {
                        "local": {
                            "provider": "openai-compatible",
                            "endpoint": openai_server.url,
                            "api_key": "local-token",
                        }
                    }
                }
            ),
        }
    )
    openai_server.script(text("Local answer."))

    assert final(turn(build(root))).text == "Local answer."
    (request,) = openai_server.requests
    assert bearer(request) == "local-token"
    assert (request.body["model"], request.body["temperature"]) == ("qwen2.5", 0)


def test_agent_built_from_a_loaded_spec_uses_its_config_yaml(
    write: Write, openai_server: OpenAIServer
) -> None:
    root = write(
        {
            "agent.yaml": agent_yaml({"provider": "local", "name": "qwen2.5"}),
            "config.yaml": dump(
                {
                    "providers": {
                        "local": {"provider": "openai-compatible", "endpoint": openai_server.url}
                    }
                }
            ),
        }
    )
    openai_server.script(text("ok"))

    assert final(turn(Agent(load_agent(root)))).text == "ok"


def test_azure_openai_from_environment_variables(
    write: Write, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", openai_server.root)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-secret")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    root = write(
        {
            "agent.yaml": agent_yaml(
                {"provider": "azure_openai", "name": "support-gpt4o", "max_tokens": 64}
            )
        }
    )
    openai_server.script(text("Hello from Azure.", input_tokens=3, output_tokens=4))

    events = turn(build(root))

    assert final(events).text == "Hello from Azure."
    assert final(events).usage == Usage(3, 4, 1)
    (request,) = openai_server.requests
    assert request.path == "/openai/deployments/support-gpt4o/chat/completions"
    assert request.query == {"api-version": "2024-10-21"}
    assert request.headers["api-key"] == "azure-secret"
    assert request.body["max_completion_tokens"] == 64


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("azure_openai", "AZURE_OPENAI_API_KEY"),
    ],
)
def test_missing_key_fails_when_the_agent_is_built(
    write: Write, monkeypatch: pytest.MonkeyPatch, provider: str, variable: str
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://example.openai.azure.com")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    root = write({"agent.yaml": agent_yaml({"provider": provider, "name": "some-model"})})

    with pytest.raises(ProviderError) as caught:
        build(root)

    message = str(caught.value)
    assert_user_message(message)
    assert message.startswith(f"{provider}/some-model: no API key is set.")
    assert variable in message


def test_unknown_provider_in_a_model_override_is_a_provider_error(write: Write) -> None:
    root = write({"agent.yaml": agent_yaml({"provider": "test"})})

    with pytest.raises(ProviderError, match="nosuch"):
        build(root, model="nosuch/some-model")


# --- agent images ------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint_from", ["global config.yaml", "OPENAI_BASE_URL"])
def test_image_llm_model_and_max_completion_tokens_reach_the_request(
    write: Write,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    isolated_home: Path,
    endpoint_from: str,
) -> None:
    if endpoint_from == "OPENAI_BASE_URL":
        monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    else:
        (isolated_home / "config.yaml").write_text(
            dump({"providers": {"openai-compatible": {"endpoint": openai_server.url}}}),
            encoding="utf-8",
        )
    root = write(
        {
            "config.yaml": dump(
                {
                    "spec_version": 1,
                    "name": "helper",
                    "llm": {"model": "openai-compatible/qwen2.5-7b", "max_completion_tokens": 2048},
                }
            ),
            "AGENTS.md": "You help with the shop's orders.\n",
        }
    )
    openai_server.script(text("Order found."))

    assert final(turn(build(root))).text == "Order found."
    body = openai_server.requests[0].body
    assert body["model"] == "qwen2.5-7b"
    assert body["max_completion_tokens"] == 2048
    assert "You help with the shop's orders." in body["messages"][0]["content"]


# --- Anthropic ---------------------------------------------------------------------------


def test_anthropic_streams_text_with_usage_and_settings(
    write: Write, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    root = write(
        {
            "agent.yaml": agent_yaml(
                {
                    "provider": "anthropic",
                    "name": "claude-sonnet-4-6",
                    "endpoint": anthropic_server.url,
                    "max_tokens": 321,
                    "temperature": 0.2,
                }
            )
        }
    )
    anthropic_server.script(text("Sunny and warm in Lisbon.", input_tokens=17, output_tokens=6))

    events = turn(build(root))

    deltas = of_type(events, TextDelta)
    assert len(deltas) >= 3
    assert "".join(d.text for d in deltas) == "Sunny and warm in Lisbon."
    assert events[-2] == Usage(input_tokens=17, output_tokens=6, requests=1)
    assert final(events).text == "Sunny and warm in Lisbon."
    (request,) = anthropic_server.requests
    assert request.path == "/v1/messages"
    assert anthropic_key(request) == "sk-ant-test"
    assert "anthropic-version" in request.headers
    body = request.body
    assert (body["model"], body["max_tokens"], body["temperature"]) == (
        "claude-sonnet-4-6",
        321,
        0.2,
    )
    assert body["stream"] is True
    system = body["system"]
    system_text = system if isinstance(system, str) else "".join(b["text"] for b in system)
    assert system_text.endswith(INSTRUCTIONS)  # pydantic-ai may prepend its own framing
    assert body["messages"][-1]["role"] == "user"


def test_anthropic_tool_use_round_trip(
    write: Write, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    root = write(
        {
            "agent.yaml": agent_yaml(
                {
                    "provider": "anthropic",
                    "name": "claude-sonnet-4-6",
                    "endpoint": anthropic_server.url,
                },
                tools=[WEATHER_TOOL_ENTRY],
            ),
            "tools/weather.py": WEATHER_TOOL,
        }
    )
    anthropic_server.script(
        tool_calls(
            Call("get_weather", {"city": "Lisbon"}, id="toolu_w1"),
            text="Let me check.",
            input_tokens=30,
            output_tokens=12,
        ),
        text("It is 21 °C in Lisbon.", input_tokens=50, output_tokens=9),
    )

    events = turn(build(root))

    (call,) = of_type(events, ToolCallFinished)
    assert (call.call_id, call.name, call.args) == ("toolu_w1", "get_weather", {"city": "Lisbon"})
    assert call.result == {"city": "Lisbon", "temperature_c": 21}
    assert "".join(d.text for d in of_type(events, TextDelta)) == (
        "Let me check.It is 21 °C in Lisbon."
    )
    assert final(events).text == "It is 21 °C in Lisbon."
    assert final(events).usage == Usage(input_tokens=80, output_tokens=21, requests=2)

    first, second = anthropic_server.bodies()
    (tool,) = first["tools"]
    assert tool["name"] == "get_weather"
    assert tool["input_schema"]["required"] == ["city"]
    assistant, result = second["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert {
        "type": "tool_use",
        "id": "toolu_w1",
        "name": "get_weather",
        "input": {"city": "Lisbon"},
    } in assistant["content"]
    (block,) = [b for b in result["content"] if b["type"] == "tool_result"]
    assert block["tool_use_id"] == "toolu_w1"
    content = block["content"]
    content_text = content if isinstance(content, str) else "".join(c["text"] for c in content)
    assert json.loads(content_text) == {"city": "Lisbon", "temperature_c": 21}


# --- failures ------------------------------------------------------------------------------


@dataclass
class Backend:
    provider: str
    model: str
    server: ScriptedServer
    key_variable: str

    def root(self, write: Write, **execution: Any) -> Path:
        model = {"provider": self.provider, "name": self.model, "endpoint": self.server.url}
        return write({"agent.yaml": agent_yaml(model, execution=execution)})


@pytest.fixture(params=["openai", "anthropic"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    if request.param == "openai":
        server: ScriptedServer = OpenAIServer()
        chosen = Backend("openai", "gpt-4o-mini", server, "OPENAI_API_KEY")
    else:
        server = AnthropicServer()
        chosen = Backend("anthropic", "claude-sonnet-4-6", server, "ANTHROPIC_API_KEY")
    monkeypatch.setenv(chosen.key_variable, "sk-test-key")
    server.start()
    try:
        yield chosen
    finally:
        server.stop()


def test_refused_key_names_provider_model_and_key_variable(write: Write, backend: Backend) -> None:
    backend.server.script(unauthorized())

    error = failure(build(backend.root(write, max_retries=0)))

    assert isinstance(error, ProviderError)
    message = str(error)
    assert_user_message(message)
    assert message.startswith(f"{backend.provider}/{backend.model}: ")
    assert "refused" in message and backend.key_variable in message
    assert "sk-test-key" not in message


def test_unknown_model_names_the_model(write: Write, backend: Backend) -> None:
    backend.server.script(not_found(backend.model))

    error = failure(build(backend.root(write, max_retries=0)))

    assert isinstance(error, ProviderError)
    assert_user_message(str(error))
    assert str(error).startswith(f"{backend.provider}/{backend.model}: ")
    assert "does not exist" in str(error) and "model.name" in str(error)


def test_rate_limit_is_retried_by_the_sdk(write: Write, backend: Backend) -> None:
    backend.server.script(rate_limited(), text("Answer after a retry."))

    events = turn(build(backend.root(write, max_retries=2)))

    assert final(events).text == "Answer after a retry."
    assert len(backend.server.requests) == 2
    assert backend.server.requests[1].headers.get("x-stainless-retry-count") == "1"


def test_persistent_rate_limit_stops_after_max_retries(write: Write, backend: Backend) -> None:
    backend.server.script(rate_limited(), rate_limited(), rate_limited(), text("never sent"))

    error = failure(build(backend.root(write, max_retries=2)))

    assert isinstance(error, ProviderError)
    assert_user_message(str(error))
    assert "rate limited" in str(error)
    assert len(backend.server.requests) == 3  # one attempt and max_retries retries
    assert backend.server.pending == 1


def test_server_error_reports_the_status(write: Write, backend: Backend) -> None:
    backend.server.script(server_error())

    error = failure(build(backend.root(write, max_retries=0)))

    assert isinstance(error, ProviderError)
    assert_user_message(str(error))
    assert str(error).startswith(f"{backend.provider}/{backend.model}: ")
    assert "HTTP 500" in str(error)


def test_rejected_request_shows_the_provider_explanation(write: Write, backend: Backend) -> None:
    explanation = (
        "Unsupported value: 'temperature' does not support 0.3 with this model. "
        "Only the default (1) value is supported."
    )
    backend.server.script(Fail(400, explanation, "unsupported_value"))

    error = failure(build(backend.root(write, max_retries=0)))

    assert isinstance(error, ProviderError)
    assert_user_message(str(error))
    assert "HTTP 400" in str(error)
    assert explanation in str(error)


def test_slow_server_times_out(write: Write, backend: Backend) -> None:
    backend.server.script(delay(10, then=text("too late")))

    error = failure(build(backend.root(write, model_timeout=0.5, max_retries=0)))

    assert isinstance(error, ProviderError)
    assert_user_message(str(error))
    assert "timed out" in str(error) and "model_timeout" in str(error)


def test_closed_port_cannot_be_reached(write: Write, backend: Backend) -> None:
    suffix = "/v1" if backend.provider == "openai" else ""
    model = {
        "provider": backend.provider,
        "name": backend.model,
        "endpoint": closed_port_url(suffix),
    }
    root = write({"agent.yaml": agent_yaml(model, execution={"max_retries": 0})})

    error = failure(build(root))

    assert isinstance(error, ProviderError)
    assert_user_message(str(error))
    assert str(error).startswith(f"{backend.provider}/{backend.model}: cannot reach the endpoint")


# --- structured output ---------------------------------------------------------------------

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temperature_c": {"type": "integer"}},
    "required": ["city", "temperature_c"],
}


def structured_agent(write: Write, server: OpenAIServer) -> Agent:
    model = {"provider": "openai", "name": "gpt-4o-mini", "endpoint": server.url}
    return build(write({"agent.yaml": agent_yaml(model, response_format=ANSWER_SCHEMA)}))


def test_structured_output_is_retried_until_it_parses(
    write: Write, openai_server: OpenAIServer
) -> None:
    # pydantic-ai asks OpenAI for structured output through an output tool
    openai_server.script(
        tool_calls(Call("final_result", '{"city": "Lisbon"', id="call_bad")),
        tool_calls(Call("final_result", {"city": "Lisbon", "temperature_c": 21})),
    )

    answer = final(turn(structured_agent(write, openai_server)))

    assert answer.output == {"city": "Lisbon", "temperature_c": 21}
    assert json.loads(answer.text) == answer.output
    first, second = openai_server.bodies()
    (tool,) = first["tools"]
    assert tool["function"]["name"] == "final_result"
    assert tool["function"]["parameters"]["required"] == ["city", "temperature_c"]
    (retry,) = [m for m in second["messages"] if m.get("tool_call_id") == "call_bad"]
    assert "json" in retry["content"].lower()


def test_structured_output_retries_are_bounded(write: Write, openai_server: OpenAIServer) -> None:
    bad = tool_calls(Call("final_result", '{"city": '))
    openai_server.script(bad, bad, bad, text("never sent"))

    error = failure(structured_agent(write, openai_server))

    assert isinstance(error, ModelOutputError)
    assert_user_message(str(error))
    assert "unusable" in str(error)
    assert len(openai_server.requests) == 3  # one answer and two corrections
    assert openai_server.pending == 1


def test_structured_output_missing_a_required_field_is_corrected(
    write: Write, openai_server: OpenAIServer
) -> None:
    openai_server.script(
        tool_calls(Call("final_result", {"city": "Lisbon"})),
        tool_calls(Call("final_result", {"city": "Lisbon", "temperature_c": 21})),
    )

    answer = final(turn(structured_agent(write, openai_server)))

    assert answer.output == {"city": "Lisbon", "temperature_c": 21}
    assert len(openai_server.requests) == 2


def test_a_model_that_never_stops_calling_tools_is_cut_off(
    write: Write, openai_server: OpenAIServer
) -> None:
    openai_server.script(
        *[tool_calls(Call("get_weather", {"city": f"city{i}"})) for i in range(10)]
    )
    model = {"provider": "openai", "name": "gpt-4o", "endpoint": openai_server.url, "api_key": "k"}
    root = write(
        {
            "agent.yaml": agent_yaml(
                model, tools=[WEATHER_TOOL_ENTRY], execution={"max_tool_iterations": 3}
            ),
            "tools/weather.py": WEATHER_TOOL,
        }
    )
    error = failure(build(root))
    assert isinstance(error, ModelOutputError)
    assert "stopped after 3 tool iterations" in str(error)
    assert "execution.max_tool_iterations" in str(error)
    assert len(openai_server.requests) == 3 + 1  # three tool rounds, and the one that may answer
