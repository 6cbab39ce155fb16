"""A2A as the specification and its official clients expect, against a `holodeck deploy`
process with keys: the card is public and says how to authenticate (one form per
security scheme, cache headers), the endpoint answers with or without a trailing slash,
and refusals carry the error codes the specification lists."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig, ClientFactory
from a2a.client.auth import AuthInterceptor, CredentialService
from a2a.client.card_resolver import parse_agent_card
from a2a.types import Message, Part, Role, SecurityScheme, SendMessageRequest, TaskState
from google.protobuf.json_format import ParseDict

from server_harness import agent_dir, deploy_process

KEY = "k-spec-secret"
AUTH = {"Authorization": f"Bearer {KEY}"}
CARD = "/.well-known/agent-card.json"
T = TypeVar("T")


def run(main: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(main())  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`holodeck deploy` of the agent `desk` behind the key KEY; its base URL."""
    root = tmp_path_factory.mktemp("spec")
    agent = agent_dir(
        root / "desk",
        "desk",
        description="Answers about the weather desk's rota.",
        deployment={"auth": {"type": "api_key", "api_keys": [{"name": "caller", "key": KEY}]}},
    )
    env = {"HOLODECK_HOME": str(root / "home")}
    with deploy_process(str(agent), "--model", "test", env=env) as (_, url):
        yield url


class OneKey(CredentialService):
    """The caller's key for the card's `bearer` scheme, as a client's operator configures."""

    async def get_credentials(
        self, security_scheme_name: str, context: ClientCallContext | None
    ) -> str | None:
        return KEY if security_scheme_name == "bearer" else None


def keys_of(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from keys_of(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from keys_of(inner)


def rpc(url: str, method: str, params: dict[str, Any], path: str = "/a2a/desk") -> Any:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    response = httpx.post(url + path, json=body, headers=AUTH, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def code_of(answer: Any) -> int:
    assert "error" in answer, answer
    code: int = answer["error"]["code"]
    return code


def user_message(text: str = "hello", **fields: Any) -> dict[str, Any]:
    return {"messageId": "m1", "role": "user", "parts": [{"kind": "text", "text": text}], **fields}


def test_the_card_is_public_and_a_client_learns_from_it_how_to_authenticate(desk: str) -> None:
    for path in (CARD, "/a2a/desk" + CARD):
        response = httpx.get(desk + path)
        assert response.status_code == 200, response.text
        assert response.headers["cache-control"] and response.headers["etag"]
        again = httpx.get(desk + path, headers={"If-None-Match": response.headers["etag"]})
        assert again.status_code == 304 and again.headers["etag"] == response.headers["etag"]
    card = response.json()
    # keys in the specification's camelCase; the descriptions name no secret
    assert [k for k in keys_of(card) if not re.fullmatch(r"[a-z][A-Za-z0-9]*", k)] == []
    assert not re.search(r"api[ _]?key", json.dumps(card), re.IGNORECASE)
    # each security scheme is exactly one of 1.0's forms
    for name, scheme in card["securitySchemes"].items():
        assert list(scheme) == ["httpAuthSecurityScheme"], (name, scheme)
        assert ParseDict(scheme, SecurityScheme()).http_auth_security_scheme.scheme == "Bearer"
    assert parse_agent_card(card).security_requirements[0].schemes.keys() == {"bearer"}
    # everything else still needs the key, paths that look like a card's included
    assert httpx.get(desk + "/v1/agents").status_code == 401
    assert httpx.post(desk + "/a2a/desk", json={}).status_code == 401
    assert httpx.post(desk + "/a2a/desk" + CARD).status_code == 401
    assert httpx.get(desk + "/a2a/desk/x" + CARD).status_code == 401
    assert httpx.get(desk + "/v1/agents" + CARD).status_code == 401

    async def main() -> None:
        async with httpx.AsyncClient(timeout=30) as http:  # no key of its own
            found = await A2ACardResolver(http, desk).get_agent_card()
            assert found.name == "desk"
            factory = ClientFactory(ClientConfig(streaming=False, httpx_client=http))
            client = factory.create(found, interceptors=[AuthInterceptor(OneKey())])
            sent = Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="Who is on?")])
            (answer,) = [r async for r in client.send_message(SendMessageRequest(message=sent))]
            assert answer.task.status.state == TaskState.TASK_STATE_COMPLETED

    run(main)


def test_the_endpoint_answers_with_a_trailing_slash(desk: str) -> None:
    for path in ("/a2a/desk", "/a2a/desk/"):
        answer = rpc(desk, "message/send", {"message": user_message()}, path=path)
        assert answer["result"]["status"]["state"] == "completed", answer


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tasks/get", {"id": "no-such-task"}),
        ("tasks/cancel", {"id": "no-such-task"}),
        ("tasks/resubscribe", {"id": "no-such-task"}),
        ("message/send", {"message": user_message(taskId="no-such-task")}),
    ],
)
def test_an_unknown_task_is_task_not_found(desk: str, method: str, params: Any) -> None:
    if method == "tasks/resubscribe":  # answered as a stream of one event
        body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
        response = httpx.post(desk + "/a2a/desk", json=body, headers=AUTH, timeout=30)
        data = next(line for line in response.text.splitlines() if line.startswith("data:"))
        assert code_of(json.loads(data[5:])) == -32001
        return
    assert code_of(rpc(desk, method, params)) == -32001


def test_a_follow_up_to_a_finished_task_is_an_unsupported_operation(desk: str) -> None:
    done = rpc(desk, "message/send", {"message": user_message()})["result"]
    again = user_message("and then?", taskId=done["id"], contextId=done["contextId"])
    answer = rpc(desk, "message/send", {"message": again})
    assert code_of(answer) == -32004
    assert done["contextId"] in answer["error"]["message"]


@pytest.mark.parametrize(
    "parts",
    [
        [{"kind": "file", "file": {"uri": "https://example.com/a.png", "mimeType": "image/png"}}],
        [{"kind": "text", "text": ""}],
    ],
)
def test_content_the_agent_does_not_take_is_content_type_not_supported(
    desk: str, parts: list[Any]
) -> None:
    answer = rpc(desk, "message/send", {"message": user_message(parts=parts)})
    assert code_of(answer) == -32005


def test_push_notifications_are_not_supported(desk: str) -> None:
    config = {"taskId": "t1", "pushNotificationConfig": {"url": "https://example.com/hook"}}
    assert code_of(rpc(desk, "tasks/pushNotificationConfig/set", config)) == -32003
    card = httpx.get(desk + CARD).json()
    assert card["capabilities"]["pushNotifications"] is False


@pytest.mark.parametrize("missing", ["messageId", "role", "parts"])
@pytest.mark.parametrize("method", ["message/send", "SendMessage"])
def test_a_message_without_its_required_fields_is_invalid_params(
    desk: str, missing: str, method: str
) -> None:
    message = user_message()
    if method == "SendMessage":
        message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    del message[missing]
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": {"message": message}}
    response = httpx.post(
        desk + "/a2a/desk", json=body, headers={**AUTH, "A2A-Version": "1.0"}, timeout=30
    )
    error = response.json()["error"]
    assert error["code"] == -32602 and missing in error["message"], error


def test_a_negative_history_length_is_invalid_params(desk: str) -> None:
    done = rpc(desk, "message/send", {"message": user_message()})["result"]
    assert code_of(rpc(desk, "tasks/get", {"id": done["id"], "historyLength": -1})) == -32602
    sent = {"message": user_message(), "configuration": {"historyLength": -2}}
    assert code_of(rpc(desk, "message/send", sent)) == -32602
