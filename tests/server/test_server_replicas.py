"""Outgrowing one process: servers that share a Redis or PostgreSQL session store. A
conversation started on one continues on another, and turns of one session stay in
order across processes (the lock is in the store)."""

from __future__ import annotations

import asyncio
import socket
import threading
import uuid
from pathlib import Path

import httpx2 as httpx
import pytest

from server_harness import agent_dir, deploy_process, function_tool

NOTE = "def note(text: str) -> str:\n    return 'noted'\n"


def shared_agent(tmp_path: Path, store: str, url: str) -> Path:
    name = f"shared-{uuid.uuid4().hex[:8]}"  # the store outlives the test: keep keys apart
    return agent_dir(
        tmp_path / name,
        name,
        python=NOTE,
        tools=[function_tool("note")],
        memory={"store": store, "url": url, "max_messages": 200},
    )


def users(client: httpx.Client, session_id: str) -> list[str]:
    messages = client.get(f"/v1/sessions/{session_id}").json()["messages"]
    return [m["content"] for m in messages if m["role"] == "user"]


@pytest.mark.slow
@pytest.mark.parametrize("store", ["redis", "postgres"])
def test_two_servers_share_sessions_and_keep_their_turns_in_order(
    tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    url: str = request.getfixturevalue(f"{store}_url")
    root = shared_agent(tmp_path, store, url)
    with (
        deploy_process(str(root), "--model", "test") as (_, first_url),
        deploy_process(str(root), "--model", "test") as (_, second_url),
        httpx.Client(base_url=first_url, timeout=60) as first,
        httpx.Client(base_url=second_url, timeout=60) as second,
    ):
        # `/call *`: each turn calls the agent's tool, so a turn is four messages
        started = first.post("/v1/chat", json={"message": "turn 0 /call *"}).json()
        session_id = started["session_id"]
        second.post("/v1/chat", json={"message": "turn 1 /call *", "session_id": session_id})
        assert users(first, session_id) == ["turn 0 /call *", "turn 1 /call *"]  # on the other

        statuses: list[int] = []

        def turn(n: int) -> None:
            client = first if n % 2 else second
            body = {"message": f"turn {n} /call *", "session_id": session_id}
            statuses.append(client.post("/v1/chat", json=body).status_code)

        threads = [threading.Thread(target=turn, args=(n,)) for n in range(2, 10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(90)
        assert statuses == [200] * 8
        said = users(second, session_id)
        assert sorted(said) == sorted(f"turn {n} /call *" for n in range(10))
        messages = second.get(f"/v1/sessions/{session_id}").json()["messages"]
        # every turn saw the one before it: no turn's messages interleave with another's
        assert [m["role"] for m in messages] == [
            "user",
            "tool_call",
            "tool_result",
            "assistant",
        ] * 10


@pytest.mark.slow
def test_workers_share_a_redis_store(tmp_path: Path, redis_url: str) -> None:
    root = shared_agent(tmp_path, "redis", redis_url)
    with deploy_process(str(root), "--model", "test", "--workers", "2") as (_, url):
        reply = httpx.post(url + "/v1/chat", json={"message": "one"}, timeout=60)
        session_id = reply.json()["session_id"]
        for message in ("two", "three", "four"):  # a new connection each: any worker takes it
            body = {"message": message, "session_id": session_id}
            assert httpx.post(url + "/v1/chat", json=body, timeout=60).status_code == 200
        with httpx.Client(base_url=url, timeout=60) as client:
            assert users(client, session_id) == ["one", "two", "three", "four"]


def test_a_workers_listening_socket_turns_nagle_off_on_its_connections() -> None:
    """With --workers, uvicorn binds the socket itself; the connections it accepts must
    have TCP_NODELAY, or every answer on a kept-alive connection waits for the client's
    delayed ACK (~40 ms; bench/server_load.py shows the figure)."""
    from holodeck.server._tcp import TcpConfig

    async def accepted_nodelay() -> int:
        sock = TcpConfig(app=None, host="127.0.0.1", port=0, workers=2).bind_socket()
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            seen.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=sock)
        async with server:
            port = sock.getsockname()[1]
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                return await asyncio.wait_for(seen, 20)
            finally:
                writer.close()

    assert asyncio.run(accepted_nodelay()) != 0
