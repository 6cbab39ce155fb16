"""A request's own model settings and answer format, honoured for its turn: the official
`openai` client talks over real HTTP to a `holodeck deploy` process whose agents' model is
a scripted OpenAI-compatible server, which shows what reached the model. What a model
cannot take, and what no turn can do, is a 400 naming the field."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
from pydantic import BaseModel

from scripted_servers import Call, OpenAIServer, text, tool_calls
from server_harness import agent_dir, deploy_process, function_tool, log_lines


class Verdict(BaseModel):
    city: str
    score: int


LOOKUP = '''
def lookup(city: str) -> str:
    """The weather in a city."""
    return "sunny"
'''


@dataclass
class Deployed:
    url: str
    model: OpenAIServer
    home: Path

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url + "/v1", api_key="unused", max_retries=0)


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    root = tmp_path_factory.mktemp("turn-settings")
    model = OpenAIServer().start()
    endpoint = {"provider": "openai", "name": "gpt-4o-mini", "endpoint": model.url}
    oracle = agent_dir(
        root / "oracle",
        "oracle",
        model={**endpoint, "temperature": 0.2},
        python=LOOKUP,
        tools=[function_tool("lookup")],
    )
    # never reached: what it cannot take is refused before any request
    poet = agent_dir(
        root / "poet",
        "poet",
        model={"provider": "anthropic", "name": "claude-sonnet-4-5", "endpoint": model.url},
    )
    env = {
        "OPENAI_API_KEY": "sk-test-1234",
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "HOLODECK_HOME": str(root / "home"),
    }
    try:
        with deploy_process(str(oracle), str(poet), env=env, cwd=root) as (_, url):
            yield Deployed(url, model, root / "home")
    finally:
        model.stop()


def user(said: str) -> list[Any]:
    return [{"role": "user", "content": said}]


def test_sampling_fields_stop_and_seed_reach_the_model_for_that_turn(
    deployed: Deployed,
) -> None:
    model = deployed.model
    model.script(text("Bold answer."), text("Calm again."))
    asked = len(model.requests)
    done = deployed.client().chat.completions.create(
        model="oracle",
        messages=user("hi"),
        temperature=1.5,
        top_p=0.5,
        max_completion_tokens=10,
        stop=["END"],
        seed=7,
        presence_penalty=0.5,
        parallel_tool_calls=False,
    )
    assert done.choices[0].message.content == "Bold answer."
    sent = model.requests[asked].body
    assert (sent["temperature"], sent["top_p"], sent["seed"]) == (1.5, 0.5, 7)
    assert sent["stop"] == ["END"] and sent["presence_penalty"] == 0.5
    assert 10 in (sent.get("max_completion_tokens"), sent.get("max_tokens"))
    assert sent["parallel_tool_calls"] is False
    # the next turn has the agent's own settings again
    deployed.client().chat.completions.create(model="oracle", messages=user("hi"))
    after = model.requests[asked + 1].body
    assert after["temperature"] == 0.2 and "seed" not in after and "stop" not in after


def test_the_responses_api_passes_its_sampling_fields_on(deployed: Deployed) -> None:
    model = deployed.model
    model.script(text("Short."))
    asked = len(model.requests)
    done = deployed.client().responses.create(
        model="oracle", input="hi", temperature=0.9, top_p=0.3, max_output_tokens=20
    )
    assert done.output_text == "Short."
    sent = model.requests[asked].body
    assert (sent["temperature"], sent["top_p"]) == (0.9, 0.3)
    assert 20 in (sent.get("max_completion_tokens"), sent.get("max_tokens"))


def test_a_field_the_agents_model_cannot_take_is_refused_by_name(deployed: Deployed) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        deployed.client().chat.completions.create(model="poet", messages=user("hi"), seed=7)
    assert isinstance(refused.value.body, dict)
    assert refused.value.body["param"] == "seed"
    assert "anthropic" in refused.value.body["message"]


def test_a_per_request_schema_shapes_the_answer_of_an_agent_without_one(
    deployed: Deployed,
) -> None:
    model = deployed.model
    # the first answer does not fit the schema: it goes back to the model
    model.script(
        tool_calls(Call("final_result", {"city": "Lisbon"})),
        tool_calls(Call("final_result", {"city": "Lisbon", "score": 4})),
    )
    asked = len(model.requests)
    done = deployed.client().chat.completions.parse(
        model="oracle", messages=user("Grade Lisbon"), response_format=Verdict
    )
    assert done.choices[0].message.parsed == Verdict(city="Lisbon", score=4)
    first = model.requests[asked].body
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert set(offered["final_result"]["parameters"]["required"]) == {"city", "score"}
    assert len(model.requests) == asked + 2
    # the Responses API's `text.format` asks the same
    model.script(tool_calls(Call("final_result", {"city": "Oslo", "score": 5})))
    schema = Verdict.model_json_schema()
    answer = deployed.client().responses.create(
        model="oracle",
        input="Grade Oslo",
        text={"format": {"type": "json_schema", "name": "Verdict", "schema": schema}},
    )
    assert Verdict.model_validate_json(answer.output_text) == Verdict(city="Oslo", score=5)


def test_tool_choice_none_offers_no_tools_and_a_forced_call_is_refused(
    deployed: Deployed,
) -> None:
    model = deployed.model
    model.script(text("No tools needed."), text("Maybe tools."))
    asked = len(model.requests)
    done = deployed.client().chat.completions.create(
        model="oracle", messages=user("Weather?"), tool_choice="none"
    )
    assert done.choices[0].message.content == "No tools needed."
    sent = model.requests[asked].body
    names = [t["function"]["name"] for t in sent.get("tools", [])]
    assert "lookup" not in names or sent.get("tool_choice") == "none"
    deployed.client().chat.completions.create(
        model="oracle", messages=user("Weather?"), tool_choice="auto"
    )
    assert [t["function"]["name"] for t in model.requests[asked + 1].body["tools"]] == ["lookup"]
    forced: list[Any] = ["required", {"type": "function", "function": {"name": "lookup"}}]
    for choice in forced:
        with pytest.raises(openai.BadRequestError) as refused:
            deployed.client().chat.completions.create(
                model="oracle", messages=user("Weather?"), tool_choice=choice
            )
        assert isinstance(refused.value.body, dict)
        assert refused.value.body["param"] == "tool_choice"
    with pytest.raises(openai.BadRequestError) as responses:
        deployed.client().responses.create(model="oracle", input="hi", tool_choice="required")
    assert isinstance(responses.value.body, dict)
    assert responses.value.body["param"] == "tool_choice"
    assert len(model.requests) == asked + 2


def test_user_and_metadata_are_kept_in_the_request_log(deployed: Deployed) -> None:
    deployed.model.script(text("Logged."), text("Logged too."))
    deployed.client().chat.completions.create(
        model="oracle", messages=user("hi"), user="u-42", metadata={"team": "blue"}
    )
    line = log_lines(deployed.home, "oracle")[-1]
    assert (line["user"], line["metadata"]) == ("u-42", {"team": "blue"})
    deployed.client().responses.create(
        model="oracle", input="hi", user="u-7", metadata={"team": "red"}
    )
    line = log_lines(deployed.home, "oracle")[-1]
    assert (line["endpoint"], line["user"], line["metadata"]) == (
        "/v1/responses",
        "u-7",
        {"team": "red"},
    )
