"""What OpenAI clients send and read on the OpenAI routes: the fields common clients
(LangChain's ChatOpenAI, the OpenAI Agents SDK, LiteLLM) send with no setting of the
user's are accepted at their neutral values and refused by name when they ask for
something the agent cannot do; /openapi.json describes the routes' errors in OpenAI's
shape; a `store: false` response is kept nowhere. Real HTTP to a served agent whose
model is a scripted OpenAI- or Anthropic-compatible server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import openai
import pytest

from scripted_servers import AnthropicServer, OpenAIServer, text
from server_harness import Server, agent_dir, served

KEY = "k-wire-secret"


@dataclass
class Served:
    server: Server
    model: OpenAIServer
    claude: AnthropicServer

    def post(self, payload: dict[str, Any], key: str = KEY) -> httpx.Response:
        headers = {"Authorization": f"Bearer {key}"}
        return self.server.client.post("/v1/chat/completions", json=payload, headers=headers)

    def openai(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.server.url + "/v1", api_key=KEY, max_retries=0)


@pytest.fixture
def wire(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-provider-secret")
    model = OpenAIServer().start()
    claude = AnthropicServer().start()
    oracle = agent_dir(
        tmp_path / "oracle",
        "oracle",
        model={"provider": "openai", "name": "gpt-4o-mini", "endpoint": model.url},
    )
    poet = agent_dir(
        tmp_path / "poet",
        "poet",
        model={"provider": "anthropic", "name": "claude-sonnet-4-5", "endpoint": claude.url},
    )
    keys = (("caller", KEY),)
    try:
        with served(oracle, poet, state_dir=tmp_path / "state", model=None, named_keys=keys) as s:
            yield Served(s, model, claude)
    finally:
        model.stop()
        claude.stop()


QUESTION = [{"role": "user", "content": "Hi"}]

# what each client puts in a request body by default, written out by hand
LANGCHAIN = {"stream": False, "n": 1, "temperature": 0.7}
LANGCHAIN_STREAMING = {"stream": True, "n": 1, "stream_options": {"include_usage": True}}
EVERY_DEFAULT = {
    "stream": False,
    "n": 1,
    "store": False,
    "service_tier": "auto",
    "modalities": ["text"],
    "audio": None,
    "prediction": None,
    "web_search_options": None,
    "reasoning_effort": None,
    "verbosity": None,
    "logprobs": False,
    "top_logprobs": None,
    "logit_bias": None,
    "presence_penalty": 0,
    "frequency_penalty": 0,
    "top_p": 1,
    "user": None,
    "metadata": None,
    "functions": None,
    "function_call": None,
    "tools": None,
    "tool_choice": None,
    "parallel_tool_calls": None,
    "response_format": None,
    "seed": None,
    "stop": None,
    "max_tokens": None,
}
# values asking for what no agent here does
ASKING = [
    ("audio", {"voice": "alloy", "format": "wav"}),
    ("modalities", ["text", "audio"]),
    ("reasoning_effort", "high"),
    ("prediction", {"type": "content", "content": "Hello"}),
    ("web_search_options", {}),
    ("service_tier", "flex"),
    ("verbosity", "low"),
    ("n", 2),
    ("logprobs", True),
]
# an earlier answer appended to the history as the openai client returns it
ROUND_TRIPPED = {
    "role": "assistant",
    "content": "Hello.",
    "refusal": None,
    "annotations": [],
    "audio": None,
    "function_call": None,
    "tool_calls": None,
}


def test_the_fields_clients_send_by_default_are_accepted_and_other_values_refused(
    wire: Served,
) -> None:
    history = [*QUESTION, ROUND_TRIPPED, {"role": "user", "content": "Again?"}]
    for defaults in (LANGCHAIN, EVERY_DEFAULT):
        wire.model.script(text("Fine."))
        answer = wire.post({"model": "oracle", "messages": history, **defaults})
        assert answer.status_code == 200, answer.text
        assert answer.json()["choices"][0]["message"]["content"] == "Fine."
    assert wire.model.requests[0].body["temperature"] == 0.7
    wire.model.script(text("Streamed fine."))
    streamed = wire.post({"model": "oracle", "messages": QUESTION, **LANGCHAIN_STREAMING})
    chunks = [
        json.loads(line[len("data: ") :])
        for line in streamed.text.splitlines()
        if line.startswith("data: {")
    ]
    pieces = [c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]]
    assert streamed.status_code == 200 and "".join(pieces) == "Streamed fine."
    assert "usage" in chunks[-1]  # stream_options.include_usage is honoured
    # neutral penalties and top_p, to a model that takes no penalties: nothing asked
    wire.claude.script(text("Fine too."))
    answer = wire.post({"model": "poet", "messages": QUESTION, **EVERY_DEFAULT})
    assert answer.status_code == 200, answer.text
    assert answer.json()["choices"][0]["message"]["content"] == "Fine too."
    asked = (len(wire.model.requests), len(wire.claude.requests))
    for field, value in ASKING:
        refused = wire.post({"model": "oracle", "messages": QUESTION, field: value})
        assert refused.status_code == 400, (field, refused.text)
        assert refused.json()["error"]["param"] == field
        assert field in refused.json()["error"]["message"]
    penalty = wire.post({"model": "poet", "messages": QUESTION, "presence_penalty": 0.5})
    assert penalty.status_code == 400 and penalty.json()["error"]["param"] == "presence_penalty"
    assert (len(wire.model.requests), len(wire.claude.requests)) == asked


def _schema(spec: dict[str, Any], path: str, method: str, status: str) -> dict[str, Any]:
    """The JSON Schema /openapi.json gives for an error answer, able to resolve its refs."""
    content = spec["paths"][path][method]["responses"][status]["content"]["application/json"]
    return {"components": spec["components"], **content["schema"]}


def test_openapi_describes_the_openai_routes_errors_in_openais_shape(wire: Served) -> None:
    auth = {"Authorization": f"Bearer {KEY}"}
    spec = wire.server.client.get("/openapi.json", headers=auth).json()
    chat_400 = _schema(spec, "/v1/chat/completions", "post", "400")
    ref = chat_400["$ref"].rsplit("/", 1)[-1]
    detail = spec["components"]["schemas"][ref]["properties"]["error"]["$ref"].rsplit("/", 1)[-1]
    assert set(spec["components"]["schemas"][detail]["required"]) >= {
        "message",
        "type",
        "param",
        "code",
    }
    for path, method in (
        ("/v1/chat/completions", "post"),
        ("/v1/responses", "post"),
        ("/v1/models/{model_id}", "get"),
    ):
        for status in ("400", "401", "404", "429"):
            assert _schema(spec, path, method, status)["$ref"] == chat_400["$ref"], (path, status)
        # these routes answer a request they cannot read with a 400, never FastAPI's 422
        assert "422" not in spec["paths"][path][method]["responses"], path
    # real refusals fit the schema the server publishes for them
    invalid = wire.post({"model": "oracle", "messages": []})
    assert invalid.status_code == 400
    jsonschema.validate(invalid.json(), chat_400)
    unauthorized = wire.post({"model": "oracle", "messages": QUESTION}, key="wrong")
    assert unauthorized.status_code == 401
    jsonschema.validate(unauthorized.json(), _schema(spec, "/v1/chat/completions", "post", "401"))
    # HoloDeck's own routes keep HoloDeck's shape, which OpenAI's schema does not describe
    own = _schema(spec, "/v1/chat", "post", "401")
    assert own["$ref"] != chat_400["$ref"]
    refused = wire.server.client.post("/v1/chat", json={"agent": "oracle", "message": "hi"})
    assert refused.status_code == 401
    jsonschema.validate(refused.json(), own)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(refused.json(), chat_400)


def test_a_response_with_store_false_is_kept_nowhere(wire: Served) -> None:
    client = wire.openai()
    wire.model.script(text("Noted: blue."), text("Noted: red."), text("You said blue."))
    first = client.responses.create(model="oracle", input="My colour is blue.")
    aside = client.responses.create(
        model="oracle", input="No, it is red.", previous_response_id=first.id, store=False
    )
    assert aside.output_text == "Noted: red." and aside.store is False
    # it went on from the stored conversation...
    assert {"role": "assistant", "content": "Noted: blue."} in wire.model.requests[1].body[
        "messages"
    ]
    # ...but cannot be read back or continued, and the stored conversation lacks it
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.retrieve(aside.id)
    assert isinstance(missing.value.body, dict) and missing.value.body["code"] == "unknown_response"
    with pytest.raises(openai.NotFoundError) as gone:
        client.responses.create(model="oracle", input="And?", previous_response_id=aside.id)
    assert isinstance(gone.value.body, dict)
    assert gone.value.body["param"] == "previous_response_id"
    later = client.responses.create(
        model="oracle", input="What is my colour?", previous_response_id=first.id
    )
    assert later.output_text == "You said blue."
    said = [m.get("content") for m in wire.model.requests[2].body["messages"]]
    assert "My colour is blue." in said and "No, it is red." not in said
    assert "Noted: red." not in said
