"""Whatever body reaches an agent's A2A endpoint, the answer is a JSON-RPC response (an
error for anything malformed), never a server failure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server_harness import WEATHER, Server, served

METHODS = [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "CancelTask",
    "ListTasks",
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
    "nonsense",
]
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
parts = st.fixed_dictionaries(
    {},
    optional={
        "text": st.text(max_size=30) | values,
        "kind": st.sampled_from(["text", "data", "file"]) | values,
        "data": values,
        "raw": st.text(max_size=12) | values,
        "url": values,
        "mediaType": values,
    },
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "messageId": st.text(max_size=12) | values,
        "role": st.sampled_from(["user", "agent", "ROLE_USER", "ROLE_AGENT", "x"]) | values,
        "parts": st.lists(parts, max_size=3) | values,
        "contextId": st.text(max_size=140) | values,
        "taskId": st.text(max_size=12) | values,
    },
)
params = st.fixed_dictionaries(
    {},
    optional={
        "message": messages | values,
        "id": st.text(max_size=40) | values,
        "historyLength": values,
        "configuration": st.dictionaries(
            st.sampled_from(["historyLength", "returnImmediately", "blocking"]), values
        )
        | values,
    },
)
requests = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.just("2.0") | values,
        "id": st.integers() | st.text(max_size=8) | values,
        "method": st.sampled_from(METHODS) | values,
        "params": params | values,
    },
)
bodies = (
    requests.map(lambda r: json.dumps(r).encode())
    | values.map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=200)
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    state = tmp_path_factory.mktemp("a2a-fuzz")
    with served(WEATHER, state_dir=state, log_dir=str(state / "logs")) as running:
        yield running


def _check(server: Server, body: bytes, version: str | None) -> None:
    headers = {"Content-Type": "application/json"}
    if version is not None:
        headers["A2A-Version"] = version
    answer = server.client.post("/a2a/weather", content=body, headers=headers)
    assert answer.status_code == 200, (body, answer.status_code, answer.text)
    kind = answer.headers["content-type"]
    if kind.startswith("text/event-stream"):
        events = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
        assert events, answer.text
        for data in events:
            _rpc(json.loads(data))
        return
    _rpc(answer.json())


def _rpc(reply: Any) -> None:
    assert reply["jsonrpc"] == "2.0"
    assert ("result" in reply) != ("error" in reply), reply
    if "error" in reply:
        assert isinstance(reply["error"]["code"], int)
        assert "Traceback" not in json.dumps(reply)


@given(body=bodies, version=st.sampled_from([None, "1.0", "0.3", "9"]))
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
def test_any_body_gets_a_json_rpc_answer(server: Server, body: bytes, version: str | None) -> None:
    _check(server, body, version)


def test_the_server_still_answers_after_them(server: Server, tmp_path: Path) -> None:
    good = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "message/send",
        "params": {
            "message": {"messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "hi"}]}
        },
    }
    reply = server.client.post("/a2a/weather", json=good).json()
    assert reply["result"]["status"]["state"] == "completed"
