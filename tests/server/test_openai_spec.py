"""`/v1/chat/completions` as OpenAI's own client reads it: errors in OpenAI's shape,
`response_format` in the agent's own schema, fields with nothing to honour them
refused by name. The official `openai` package talks over real HTTP to
a `holodeck deploy` process whose agents' model is a scripted OpenAI-compatible server,
so what reached the model can be read back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
from pydantic import BaseModel

from scripted_servers import Call, OpenAIServer, tool_calls
from server_harness import agent_dir, deploy_process

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["city", "score"],
    "additionalProperties": False,
}


class Verdict(BaseModel):
    city: str
    score: int


Deployed = tuple[str, OpenAIServer]


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    root = tmp_path_factory.mktemp("openai-spec")
    model = OpenAIServer().start()
    endpoint = {"provider": "openai", "name": "gpt-4o-mini", "endpoint": model.url}
    oracle = agent_dir(root / "oracle", "oracle", model={**endpoint, "temperature": 0.2})
    grader = agent_dir(root / "grader", "grader", model=endpoint, response_format=SCHEMA)
    env = {"OPENAI_API_KEY": "sk-test-1234", "HOLODECK_HOME": str(root / "home")}
    try:
        with deploy_process(str(oracle), str(grader), env=env, cwd=root) as (_, url):
            yield url, model
    finally:
        model.stop()


def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)


def user(text: str) -> list[Any]:
    return [{"role": "user", "content": text}]


def test_errors_come_in_openai_shape_with_400_for_an_invalid_request(deployed: Deployed) -> None:
    url, _ = deployed
    with pytest.raises(openai.BadRequestError) as invalid:
        client(url).chat.completions.create(model="oracle", messages=[])
    assert invalid.value.status_code == 400
    body = invalid.value.body
    assert isinstance(body, dict)
    assert set(body) >= {"message", "type", "param", "code"}
    assert body["type"] == "invalid_request_error" and body["param"] == "messages"
    with pytest.raises(openai.NotFoundError) as missing:
        client(url).chat.completions.create(model="nobody", messages=user("hi"))
    assert isinstance(missing.value.body, dict)
    assert missing.value.body["code"] == "model_not_found"
    assert missing.value.body["param"] == "model"
    assert "nobody" in missing.value.body["message"]


def test_a_model_is_retrieved_by_its_id(deployed: Deployed) -> None:
    url, _ = deployed
    found = client(url).models.retrieve("grader")
    assert (found.id, found.object) == ("grader", "model")
    with pytest.raises(openai.NotFoundError) as missing:
        client(url).models.retrieve("nobody")
    assert isinstance(missing.value.body, dict)
    assert missing.value.body["code"] == "model_not_found"


def test_a_response_format_matching_the_agents_own_uses_its_schema(deployed: Deployed) -> None:
    url, model = deployed
    model.script(tool_calls(Call("final_result", {"city": "Lisbon", "score": 4})))
    done = client(url).chat.completions.parse(
        model="grader", messages=user("Grade Lisbon"), response_format=Verdict
    )
    assert done.choices[0].message.parsed == Verdict(city="Lisbon", score=4)
    model.script(tool_calls(Call("final_result", {"city": "Oslo", "score": 5})))
    plain = client(url).chat.completions.create(
        model="grader", messages=user("Grade Oslo"), response_format={"type": "json_object"}
    )
    assert Verdict.model_validate_json(plain.choices[0].message.content or "").city == "Oslo"
    asked = len(model.requests)
    with pytest.raises(openai.BadRequestError) as unknown:
        client(url).chat.completions.create(
            model="grader", messages=user("Hi"), response_format={"type": "yaml"}
        )
    assert isinstance(unknown.value.body, dict)
    assert unknown.value.body["param"] == "response_format"
    assert len(model.requests) == asked  # nothing reached the model
