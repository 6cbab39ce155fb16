"""The OpenAI Responses API (`/v1/responses`), with the official `openai` package and the
OpenAI Agents SDK as clients and the agent's own model a scripted OpenAI-compatible
server: real SDKs, real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

import scripted_servers
from scripted_servers import OpenAIServer, text
from server_harness import Server, agent_dir, deploy_process, served

openai_server = scripted_servers.openai_server

KEYS = (("alice", "k-alice-secret"), ("bob", "k-bob-secret"))


@pytest.fixture
def agent(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Server, OpenAIServer]]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-secret")
    root = agent_dir(
        tmp_path / "oracle",
        "oracle",
        model={
            "provider": "openai",
            "name": "gpt-4o-mini",
            "endpoint": openai_server.url,
            "temperature": 0.2,
        },
        instructions={"inline": "You answer briefly."},
    )
    with served(root, state_dir=tmp_path / "state", model=None, named_keys=KEYS) as server:
        yield server, openai_server


def client(server: Server, key: str = "k-alice-secret") -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0)


def sent(body: Any) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in body["messages"] if isinstance(m["content"], str)]


def test_a_response_is_created_continued_and_read_back(
    agent: tuple[Server, OpenAIServer],
) -> None:
    server, model = agent
    model.script(text("Noted: blue.", input_tokens=20, output_tokens=4), text("You said blue."))
    first = client(server).responses.create(
        model="oracle", input="My colour is blue.", instructions="Answer in English."
    )
    assert first.status == "completed" and first.output_text == "Noted: blue."
    assert first.usage is not None and first.usage.input_tokens == 20
    # the request's instructions are honoured, beside the agent's own
    messages = sent(model.requests[0].body)
    assert ("system", "You answer briefly.") in messages[:2]
    assert ("system", "Answer in English.") in messages[:2]
    assert messages[2] == ("user", "My colour is blue.")
    second = client(server).responses.create(
        model="oracle", input="What is my colour?", previous_response_id=first.id
    )
    assert second.output_text == "You said blue."
    assert ("assistant", "Noted: blue.") in sent(model.requests[1].body)
    again = client(server).responses.retrieve(second.id)
    assert again.id == second.id and again.output_text == "You said blue."
    # another key reads none of it, and cannot continue it
    with pytest.raises(openai.NotFoundError, match="no response"):
        client(server, "k-bob-secret").responses.retrieve(second.id)
    with pytest.raises(openai.NotFoundError, match="no response"):
        client(server, "k-bob-secret").responses.create(
            model="oracle", input="And mine?", previous_response_id=first.id
        )


def test_a_streamed_response_arrives_as_response_events(
    agent: tuple[Server, OpenAIServer],
) -> None:
    server, model = agent
    model.script(text("Forty two, as computed.", input_tokens=11, output_tokens=5))
    with client(server).responses.stream(model="oracle", input="Compute") as stream:
        kinds = []
        deltas = []
        for event in stream:
            kinds.append(event.type)
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = stream.get_final_response()
    assert "".join(deltas) == "Forty two, as computed." and len(deltas) > 2
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert final.output_text == "Forty two, as computed."
    assert final.usage is not None and final.usage.total_tokens == 16
    assert client(server).responses.retrieve(final.id).output_text == final.output_text


def test_fields_the_agent_cannot_honour_are_refused_by_name(
    agent: tuple[Server, OpenAIServer],
) -> None:
    server, model = agent
    ask = client(server).responses.create
    with pytest.raises(openai.BadRequestError, match="tool_choice") as refused:
        ask(model="oracle", input="hi", tool_choice="required")
    assert refused.value.body is not None
    assert refused.value.body["param"] == "tool_choice"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError, match="its definition"):
        ask(model="oracle", input="hi", tools=[{"type": "web_search"}])
    with pytest.raises(openai.BadRequestError, match="`reasoning`"):
        ask(model="oracle", input="hi", reasoning={"effort": "high"})
    with pytest.raises(openai.BadRequestError, match="function_call_output"):
        ask(
            model="oracle",
            input=[
                {"type": "function_call_output", "call_id": "c1", "output": "42"},
                {"role": "user", "content": "so?"},
            ],
        )
    with pytest.raises(openai.BadRequestError, match="unknown type"):
        ask(model="oracle", input="hi", text={"format": {"type": "yaml"}})
    with pytest.raises(openai.NotFoundError, match="no agent named"):
        ask(model="gpt-4o", input="hi")
    assert model.requests == []
    # a temperature of the request's own is passed on
    model.script(text("ok"))
    assert ask(model="oracle", input="hi", temperature=0.9).output_text == "ok"
    assert model.requests[0].body["temperature"] == 0.9


def test_the_agents_sdk_runs_an_agent_whose_model_is_a_served_agent(
    agent: tuple[Server, OpenAIServer],
) -> None:
    agents = pytest.importorskip("agents")
    server, model = agent
    model.script(text("Paris."))
    sdk_client = openai.AsyncOpenAI(
        base_url=server.url + "/v1", api_key="k-alice-secret", max_retries=0
    )
    runner_agent = agents.Agent(
        name="asker",
        model=agents.OpenAIResponsesModel(model="oracle", openai_client=sdk_client),
    )
    config = agents.RunConfig(tracing_disabled=True)
    result = agents.Runner.run_sync(runner_agent, "Capital of France?", run_config=config)
    assert result.final_output == "Paris."
    assert ("user", "Capital of France?") in sent(model.requests[0].body)


def test_a_deployed_agent_streams_to_the_agents_sdk(tmp_path: Path) -> None:
    """`holodeck deploy` as its own process (offline `test` model), behind a key; the
    Agents SDK streams a run from it and the response is read back over the wire."""
    import asyncio

    agents = pytest.importorskip("agents")
    key = "k-deployed-secret"
    root = agent_dir(
        tmp_path / "desk",
        "desk",
        deployment={"auth": {"type": "api_key", "api_keys": [{"name": "caller", "key": key}]}},
    )
    env = {"HOLODECK_HOME": str(tmp_path / "home")}
    with deploy_process(str(root), "--model", "test", env=env) as (_, url):
        sdk_client = openai.AsyncOpenAI(base_url=url + "/v1", api_key=key, max_retries=0)
        runner_agent = agents.Agent(
            name="asker", model=agents.OpenAIResponsesModel(model="desk", openai_client=sdk_client)
        )
        config = agents.RunConfig(tracing_disabled=True)

        async def run() -> tuple[list[str], Any]:
            result = agents.Runner.run_streamed(runner_agent, "Who is on duty?", run_config=config)
            kinds = [
                event.data.type
                async for event in result.stream_events()
                if event.type == "raw_response_event"
            ]
            return kinds, result

        kinds, result = asyncio.run(run())
        assert "response.output_text.delta" in kinds and kinds[-1] == "response.completed"
        assert isinstance(result.final_output, str) and result.final_output
        response_id = result.raw_responses[-1].response_id
        sync = openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0)
        assert sync.responses.retrieve(response_id).output_text == result.final_output
