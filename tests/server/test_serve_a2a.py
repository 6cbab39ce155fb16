"""Served agents over A2A, spoken to by the official a2a-sdk client: each agent's card,
messages (answered and streamed) that are turns of a session, tasks read and cancelled,
and the same keys, ownership, limits and logs as /v1/chat."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers import get_message_text
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError, TaskNotCancelableError, TaskNotFoundError
from google.protobuf.json_format import MessageToDict

from server_harness import (
    WAITING_TOOL,
    WEATHER,
    Serve,
    agent_dir,
    function_tool,
    log_lines,
    until,
)

T = TypeVar("T")


def run(main: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(main())  # type: ignore[arg-type]


def message(text: str, context_id: str = "") -> SendMessageRequest:
    sent = Message(message_id="m-" + text[:8].replace(" ", "-"), role=Role.ROLE_USER)
    sent.parts.append(Part(text=text))
    if context_id:
        sent.context_id = context_id
    return SendMessageRequest(message=sent)


async def connect(url: str, key: str | None = None, streaming: bool = False) -> Any:
    """An a2a-sdk client of the agent at `url` (a card's base), with `key`'s header."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    http = httpx.AsyncClient(headers=headers, timeout=30)
    config = ClientConfig(streaming=streaming, httpx_client=http)
    return await ClientFactory(config).create_from_url(url)


async def answer(client: Any, text: str, context_id: str = "") -> Task:
    (response,) = [r async for r in client.send_message(message(text, context_id))]
    assert response.HasField("task")
    task: Task = response.task
    return task


def holodeck_meta(task: Task) -> dict[str, Any]:
    meta: dict[str, Any] = MessageToDict(task.metadata)["holodeck"]
    return meta


def test_the_sdk_client_reads_the_card_and_a_message_is_a_turn_of_a_session(
    serve: Serve,
) -> None:
    with serve(WEATHER) as server:

        async def main() -> None:
            async with httpx.AsyncClient() as http:
                card = await A2ACardResolver(http, server.url).get_agent_card()
            assert card.name == "weather"
            assert {s.name for s in card.skills} == {"get_weather", "get_forecast"}
            assert (
                "Current conditions"
                in next(s for s in card.skills if s.name == "get_weather").description
            )
            urls = {i.url for i in card.supported_interfaces}
            assert urls == {server.url + "/a2a/weather"}
            assert card.capabilities.streaming and not card.security_requirements

            client = await connect(server.url)
            task = await answer(client, "What's the weather in Oslo? /call get_weather")
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
            text = "".join(p.text for p in task.artifacts[0].parts)
            assert text == "city Oslo, temperature 6 °C, conditions overcast"
            assert get_message_text(task.status.message) == text
            (call,) = holodeck_meta(task)["tool_calls"]
            assert (call["name"], call["args"]["city"]) == ("get_weather", "Oslo")

            # the context is the session: a second message continues it
            again = await answer(client, "And tomorrow?", context_id=task.context_id)
            assert again.context_id == task.context_id and again.id != task.id
            session = server.client.get(f"/v1/sessions/{task.context_id}").json()
            said = [m["content"] for m in session["messages"] if m["role"] == "user"]
            assert said == ["What's the weather in Oslo? /call get_weather", "And tomorrow?"]

            # each task is kept, and read back as it ended
            got = await client.get_task(GetTaskRequest(id=task.id))
            assert got.status.state == TaskState.TASK_STATE_COMPLETED
            assert "".join(p.text for p in got.artifacts[0].parts) == text
            short = await client.get_task(GetTaskRequest(id=task.id, history_length=1))
            assert [m.role for m in short.history] == [Role.ROLE_AGENT]
            with pytest.raises(TaskNotFoundError):
                await client.get_task(GetTaskRequest(id="no-such-task"))
            with pytest.raises(TaskNotCancelableError, match="has ended"):
                await client.cancel_task(CancelTaskRequest(id=task.id))
            await client.close()

        run(main)


def test_a_streamed_message_sends_the_answer_in_chunks_and_tool_calls_as_status_updates(
    serve: Serve,
) -> None:
    with serve(WEATHER) as server:

        async def main() -> list[StreamResponse]:
            client = await connect(server.url, streaming=True)
            sent = message("Forecast for Lima? /call get_forecast")
            events = [e async for e in client.send_message(sent)]
            await client.close()
            return events

        events = run(main)
    assert events[0].HasField("task")
    assert events[0].task.status.state == TaskState.TASK_STATE_WORKING
    calls = [
        MessageToDict(e.status_update.metadata)["holodeck"]
        for e in events
        if e.HasField("status_update")
        and "holodeck" in e.status_update.metadata
        and "event" in MessageToDict(e.status_update.metadata)["holodeck"]
    ]
    assert [c["event"] for c in calls] == ["tool_call_started", "tool_call_finished"]
    assert calls[1]["name"] == "get_forecast" and calls[1]["args"]["city"] == "Lima"
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert chunks[-1].last_chunk and not chunks[0].append
    streamed = "".join(p.text for c in chunks for p in c.artifact.parts)
    final = events[-1].status_update
    assert final.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_message_text(final.status.message) == streamed
    assert "Lima" in streamed


def test_a2a_needs_a_key_and_a_context_or_task_of_another_key_is_not_found(
    serve: Serve, isolated_home: Path
) -> None:
    keys = (("alice", "k-alice-secret"), ("bob", "k-bob-secret"))
    with serve(WEATHER, named_keys=keys) as server:
        # the card is public (it says how to authenticate); the endpoint is not
        assert server.client.get("/.well-known/agent-card.json").status_code == 200
        refused = server.client.post("/a2a/weather", json={"jsonrpc": "2.0", "id": 1})
        assert refused.status_code == 401 and refused.json()["error"]["type"] == "unauthorized"

        async def main() -> None:
            alice = await connect(server.url, "k-alice-secret")
            bob = await connect(server.url, "k-bob-secret")
            card = alice._card
            assert card.security_schemes["bearer"].http_auth_security_scheme.scheme == "Bearer"
            assert list(card.security_requirements[0].schemes) == ["bearer"]
            task = await answer(alice, "alice's secret")
            with pytest.raises(TaskNotFoundError, match="no session"):
                await answer(bob, "bob here", context_id=task.context_id)
            with pytest.raises(TaskNotFoundError):
                await bob.get_task(GetTaskRequest(id=task.id))
            with pytest.raises(TaskNotFoundError):
                await bob.cancel_task(CancelTaskRequest(id=task.id))
            assert (await alice.get_task(GetTaskRequest(id=task.id))).id == task.id
            await alice.close()
            await bob.close()

        run(main)
    logged = [line for line in log_lines(isolated_home, "weather") if line["session_id"]]
    assert [(line["endpoint"], line["key"]) for line in logged] == [("/a2a/weather", "alice")]
    assert logged[0]["message_input"] == "alice's secret"
    assert "k-alice-secret" not in json.dumps(log_lines(isolated_home, "weather"))


def test_a_running_task_is_cancelled_and_its_conversation_stays_as_it_was(
    tmp_path: Path, serve: Serve
) -> None:
    root = agent_dir(
        tmp_path / "waiter", "waiter", tools=[function_tool("wait_here")], python=WAITING_TOOL
    )
    with serve(root) as server:

        async def main() -> None:
            client = await connect(server.url, streaming=True)
            plain = await connect(server.url)
            first = await answer(plain, "hello")
            await plain.close()
            stream = client.send_message(message("/call wait_here", first.context_id))
            opened = await anext(stream)
            task_id = opened.task.id
            assert opened.task.status.state == TaskState.TASK_STATE_WORKING
            while not (root / "started").exists():
                await asyncio.sleep(0.01)
            working = await client.get_task(GetTaskRequest(id=task_id))
            assert working.status.state == TaskState.TASK_STATE_WORKING
            cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
            assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
            rest = [e async for e in stream]
            assert rest[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED
            got = await client.get_task(GetTaskRequest(id=task_id))
            assert got.status.state == TaskState.TASK_STATE_CANCELED
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(CancelTaskRequest(id=task_id))
            await client.close()
            session = server.client.get(f"/v1/sessions/{first.context_id}").json()
            assert [m["content"] for m in session["messages"] if m["role"] == "user"] == ["hello"]

        run(main)


def test_each_of_several_agents_has_its_card_and_endpoint(tmp_path: Path, serve: Serve) -> None:
    one = agent_dir(tmp_path / "one", "one", description="The first.")
    two = agent_dir(tmp_path / "two", "two")
    with serve(one, two) as server:
        root = server.client.get("/.well-known/agent-card.json")
        assert root.status_code == 404
        assert "/a2a/one/.well-known/agent-card.json" in root.json()["error"]["hint"]

        async def main() -> None:
            client = await connect(server.url + "/a2a/two")
            assert client._card.name == "two"
            task = await answer(client, "who are you?")
            assert (
                "".join(p.text for p in task.artifacts[0].parts) == "Test answer to: who are you?"
            )
            await client.close()

        run(main)
        card = server.client.get("/a2a/one/.well-known/agent-card.json").json()
        assert card["description"] == "The first."
        assert server.client.get("/a2a/three/.well-known/agent-card.json").status_code == 404
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}}
        assert server.client.post("/a2a/three", json=rpc).status_code == 404


def test_agents_and_ready_list_a2a_and_the_openapi_document_has_its_routes(serve: Serve) -> None:
    with serve(WEATHER) as server:
        (agent,) = server.client.get("/v1/agents").json()["agents"]
        assert agent["protocols"] == ["chat", "openai", "ag-ui", "mcp", "a2a"]
        (ready,) = server.client.get("/ready").json()["agents"]
        assert "a2a" in ready["protocols"]
        paths = server.client.get("/openapi.json").json()["paths"]
        assert "/a2a/{agent}" in paths and "/a2a/{agent}/.well-known/agent-card.json" in paths
        methods = paths["/a2a/{agent}"]["post"]["requestBody"]["content"]["application/json"]
        assert "message/send" in methods["schema"]["properties"]["method"]["enum"]


def test_the_body_limit_and_the_rate_apply_to_a2a(serve: Serve) -> None:
    with serve(WEATHER, api_keys=("k1",), requests_per_minute=3, max_request_bytes=2000) as server:
        key = {"Authorization": "Bearer k1"}
        big = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"x": "y" * 3000}}
        too_large = server.client.post("/a2a/weather", json=big, headers=key)
        assert too_large.status_code == 413 and too_large.json()["error"]["type"] == "too_large"
        statuses = [
            server.client.get("/.well-known/agent-card.json", headers=key).status_code
            for _ in range(3)
        ]
        assert statuses[-1] == 429


def test_a_message_without_text_or_with_a_bad_context_is_an_invalid_params_error(
    serve: Serve,
) -> None:
    with serve(WEATHER) as server:

        async def main() -> None:
            client = await connect(server.url)
            empty = SendMessageRequest(message=Message(message_id="e", role=Role.ROLE_USER))
            with pytest.raises(InvalidParamsError, match="parts is missing"):
                [r async for r in client.send_message(empty)]
            with pytest.raises(InvalidParamsError, match="contextId"):
                await answer(client, "hi", context_id="../etc/passwd")
            await client.close()

        run(main)


def test_without_the_sdk_the_a2a_routes_say_what_to_install(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "a2a", None)  # as if not installed
    with serve(WEATHER) as server:
        answer = server.client.get("/.well-known/agent-card.json")
        assert answer.status_code == 501
        assert "holodeck-agents[a2a]" in answer.json()["error"]["hint"]
        rpc = server.client.post("/a2a/weather", json={"jsonrpc": "2.0", "id": 1, "method": "x"})
        assert rpc.status_code == 501
        (agent,) = server.client.get("/v1/agents").json()["agents"]
        assert "a2a" not in agent["protocols"]


def test_a_turn_refused_before_it_starts_is_an_error_with_the_status_chat_would_give(
    tmp_path: Path, serve: Serve
) -> None:
    root = agent_dir(
        tmp_path / "busy", "busy", tools=[function_tool("wait_here")], python=WAITING_TOOL
    )
    with serve(root, max_concurrent_turns=1, max_queued_turns=0) as server:

        async def main() -> dict[str, Any]:
            client = await connect(server.url)
            running = asyncio.create_task(answer(client, "/call wait_here"))
            while not (root / "started").exists():
                await asyncio.sleep(0.01)
            body = message("hello").message
            rpc = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "message/send",
                "params": {"message": {**MessageToDict(body), "role": "user"}},
            }
            async with httpx.AsyncClient(base_url=server.url) as http:
                refused = (await http.post("/a2a/busy", json=rpc)).json()
            (root / "release").write_text("go")
            done = await running
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
            await client.close()
            return refused

        refused = run(main)
    error = refused["error"]
    assert error["code"] == -32603 and "busy" in error["message"]
    assert (error["data"]["status"], error["data"]["type"]) == ("503", "overloaded")


@pytest.mark.parametrize("method", ["message/send", "message/stream"])
def test_a_client_that_leaves_cancels_its_turn(
    tmp_path: Path, serve: Serve, isolated_home: Path, method: str
) -> None:
    root = agent_dir(
        tmp_path / "left", "left", tools=[function_tool("wait_here")], python=WAITING_TOOL
    )
    with serve(root) as server:
        assert server.chat("hello", session_id="ctx-1").status_code == 200
        rpc = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": method,
            "params": {
                "message": {
                    "messageId": "m",
                    "role": "user",
                    "contextId": "ctx-1",
                    "parts": [{"kind": "text", "text": "/call wait_here"}],
                }
            },
        }

        async def leave() -> None:
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
                sent = asyncio.create_task(http.post("/a2a/left", json=rpc))
                while not (root / "started").exists():
                    await asyncio.sleep(0.01)
                sent.cancel()  # the connection closes with the answer unsent
                await asyncio.gather(sent, return_exceptions=True)

        run(leave)

        def cancelled() -> list[dict[str, Any]]:
            lines = log_lines(isolated_home, "left")
            return [x for x in lines if x["endpoint"] == "/a2a/left" and x["status"] == 499]

        until(cancelled, timeout=30, what="the turn to be cancelled")
        session = server.client.get("/v1/sessions/ctx-1").json()
        assert [m["content"] for m in session["messages"] if m["role"] == "user"] == ["hello"]
