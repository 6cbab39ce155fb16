"""Hostile input at /awp: random bodies, random JSON and near-valid AG-UI inputs get a
4xx in the server's error shape or a well-formed run, never a 500."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui_client import run_input, stream_events
from server_harness import WEATHER, Server, served

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=12,
)
ROLES = st.sampled_from(["user", "assistant", "system", "tool", "developer", "robot", 3, None])
PARTS = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20)}),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["image", "document", "audio", "binary", "video"]),
            "source": st.one_of(
                JSON,
                st.fixed_dictionaries(
                    {
                        "type": st.sampled_from(["data", "url", "file"]),
                        "value": st.text(max_size=12),
                        "mimeType": st.sampled_from(["image/png", "text/plain", "x", ""]),
                    }
                ),
            ),
        }
    ),
    JSON,
)
MESSAGES = st.lists(
    st.fixed_dictionaries(
        {"id": st.text(max_size=8), "role": ROLES},
        optional={"content": st.text(max_size=30) | st.lists(PARTS, max_size=3) | JSON},
    ),
    max_size=3,
)
NEAR_VALID = st.fixed_dictionaries(
    {},
    optional={
        "threadId": st.text(max_size=140) | JSON,
        "runId": st.text(max_size=10) | JSON,
        "messages": MESSAGES | JSON,
        "state": JSON,
        "tools": st.lists(JSON, max_size=2) | JSON,
        "context": st.lists(JSON, max_size=2) | JSON,
        "forwardedProps": JSON,
    },
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with served(WEATHER, state_dir=tmp_path_factory.mktemp("hostile")) as server:
        yield server


def check(response: httpx.Response) -> None:
    """A refusal in the error shape, or a run that is the protocol's event stream."""
    assert response.status_code != 500 and response.status_code < 500, response.text
    if response.status_code == 200:
        events = stream_events(response.text)
        assert type(events[0]).__name__ == "RunStartedEvent"
        assert type(events[-1]).__name__ in ("RunFinishedEvent", "RunErrorEvent")
        return
    assert 400 <= response.status_code < 500
    body = response.json()
    assert set(body) == {"error", "request_id"}
    assert body["error"]["type"] and body["error"]["message"]
    assert body["error"]["hint"] is None or isinstance(body["error"]["hint"], str)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(body=st.binary(max_size=200))
def test_random_bytes_are_refused_in_the_error_shape(server: Server, body: bytes) -> None:
    response = server.client.post(
        "/awp", content=body, headers={"Content-Type": "application/json"}
    )
    check(response)


@SETTINGS
@given(body=JSON)
def test_random_json_is_refused_in_the_error_shape(server: Server, body: Any) -> None:
    check(server.client.post("/awp", content=json.dumps(body)))


@SETTINGS
@given(body=NEAR_VALID)
def test_near_valid_inputs_run_or_are_refused_in_the_error_shape(
    server: Server, body: dict[str, Any]
) -> None:
    check(server.client.post("/awp/weather", json=body))


def test_what_is_wrong_is_said_where(server: Server) -> None:
    missing = server.client.post("/awp", json={"threadId": "t", "messages": []})
    assert missing.status_code == 422
    assert "runId" in missing.json()["error"]["message"]
    last = run_input("t", "Hi")
    last["messages"].append({"id": "a", "role": "assistant", "content": "Hello"})
    not_user = server.client.post("/awp", json=last)
    assert not_user.status_code == 422 and "last message" in not_user.json()["error"]["message"]
    bad_thread = server.client.post("/awp", json=run_input("a thread/with spaces", "Hi"))
    assert bad_thread.status_code == 422 and "threadId" in bad_thread.json()["error"]["message"]
    by_url = run_input(
        "t", [{"type": "image", "source": {"type": "url", "value": "http://127.0.0.1/x.png"}}]
    )
    url = server.client.post("/awp", json=by_url)
    assert url.status_code == 422
    assert "messages[-1].content.0" in url.json()["error"]["message"]
    empty = server.client.post("/awp", json=run_input("t", "   "))
    assert empty.status_code == 422 and "no text" in empty.json()["error"]["message"]
