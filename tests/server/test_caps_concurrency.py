"""An API key's daily caps hold when its turns run at once: on one server, on two server
processes sharing a store, and across a restart. The model is a scripted
OpenAI-compatible server on 127.0.0.1 that takes ~300 ms and calls a tool once a turn."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

import scripted_servers
from scripted_servers import Call, OpenAIServer, delay, text, tool_calls
from server_harness import Serve, deploy_process
from test_controls import agent_files
from yaml_dump import dump

openai_server = scripted_servers.openai_server

CAPS = {"key_daily": {"max_requests": 4, "max_tool_calls": 2}}
KEYS = (("alice", "k-alice-0123456789"), ("bob", "k-bob-0123456789"))


def write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (root / name).write_text(content, encoding="utf-8")
    return root


def slow_turns(server: OpenAIServer, count: int) -> None:
    """`count` turns' worth of answers: a tool call, then the answer, each after 300 ms."""
    for n in range(count):
        server.script(
            delay(0.3, tool_calls(Call("lookup", {"query": f"q{n}"}, id=f"c{n}"))),
            delay(0.3, text(f"answer {n}")),
        )


def tool_calls_made(server: OpenAIServer) -> int:
    """Tool results the model was sent: each is a tool call that ran."""
    return sum(
        1
        for body in server.bodies()
        for message in body.get("messages", [])
        if message.get("role") == "tool"
    )


async def ask_all(url: str, key: str, sessions: list[str]) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, timeout=90) as client:
        return list(
            await asyncio.gather(
                *(
                    client.post(
                        "/v1/chat",
                        json={"message": "find it", "session_id": session},
                        headers={"Authorization": f"Bearer {key}"},
                    )
                    for session in sessions
                )
            )
        )


def statuses(answers: list[httpx.Response]) -> list[int]:
    return sorted(answer.status_code for answer in answers)


def test_thirty_parallel_turns_of_one_key_get_what_one_at_a_time_would(
    tmp_path: Path, openai_server: OpenAIServer, serve: Serve
) -> None:
    root = write(tmp_path / "demo", agent_files(openai_server, limits=CAPS))
    slow_turns(openai_server, 30)

    with serve(root, model=None, named_keys=KEYS) as server:
        answers = asyncio.run(ask_all(server.url, KEYS[0][1], [f"s{n}" for n in range(30)]))
        bob = server.client.post(
            "/v1/chat", json={"message": "hi"}, headers={"Authorization": f"Bearer {KEYS[1][1]}"}
        )

    # one at a time: 200, 200 (2 requests and 1 tool call each), then 429
    assert statuses(answers) == [200] * 2 + [429] * 28
    refused = [a.json()["error"] for a in answers if a.status_code == 429]
    assert all(e["type"] == "limit_reached" for e in refused)
    assert all("limits.key_daily.max_" in e["message"] for e in refused)
    assert bob.status_code == 200, bob.text  # another key's day is its own
    assert len(openai_server.requests) - 2 <= 4  # bob's turn made the other two
    assert tool_calls_made(openai_server) - 1 <= 2


def test_a_turn_whose_client_hangs_up_gives_its_hold_back(
    tmp_path: Path, openai_server: OpenAIServer, serve: Serve
) -> None:
    root = write(tmp_path / "demo", agent_files(openai_server, limits=CAPS))
    openai_server.script(delay(3, text("never read")))
    slow_turns(openai_server, 10)
    key = KEYS[0][1]

    with serve(root, model=None, named_keys=KEYS, lock_wait_seconds=5) as server:
        with pytest.raises(httpx.TimeoutException):
            server.client.post(
                "/v1/chat",
                json={"message": "slow", "session_id": "gone"},
                headers={"Authorization": f"Bearer {key}"},
                timeout=0.5,
            )
        answers = asyncio.run(ask_all(server.url, key, [f"s{n}" for n in range(10)]))

    # the abandoned turn held the whole day's rest; had it kept it, every turn would
    # have waited the 5 s and been refused as busy (409)
    assert statuses(answers) == [200] * 2 + [429] * 8, [a.text for a in answers]


@pytest.mark.parametrize("store", ["sqlite", "redis"])
def test_two_server_processes_sharing_a_store_enforce_one_cap_and_a_restart_keeps_it(
    tmp_path: Path,
    openai_server: OpenAIServer,
    isolated_home: Path,
    store: str,
    request: pytest.FixtureRequest,
) -> None:
    url = (
        str(tmp_path / "sessions.db") if store == "sqlite" else request.getfixturevalue("redis_url")
    )
    name = f"demo-{uuid.uuid4().hex[:8]}"  # a Redis of the whole test run: keep keys apart
    files = agent_files(openai_server, limits=CAPS, memory={"store": store, "url": url})
    named = [{"name": n, "key": k} for n, k in KEYS]
    spec: dict[str, Any] = {"deployment": {"auth": {"type": "api_key", "api_keys": named}}}
    files["config.yaml"] = dump(spec)
    files["agent.yaml"] = files["agent.yaml"].replace("name: demo", f"name: {name}", 1)
    root = write(tmp_path / "demo", files)
    slow_turns(openai_server, 12)
    env = {"HOLODECK_HOME": os.environ["HOLODECK_HOME"]}
    alice = KEYS[0][1]

    with (
        deploy_process(str(root), env=env, cwd=tmp_path) as (_, first),
        deploy_process(str(root), env=env, cwd=tmp_path) as (_, second),
    ):
        answers = asyncio.run(_split(first, second, alice))
    assert statuses(answers) == [200] * 2 + [429] * 4, [a.text for a in answers]
    assert len(openai_server.requests) <= 4
    assert tool_calls_made(openai_server) <= 2

    seen = len(openai_server.requests)
    with deploy_process(str(root), env=env, cwd=tmp_path) as (_, again):
        after = asyncio.run(ask_all(again, alice, ["later"]))
    assert statuses(after) == [429], after[0].text  # the day's spend outlived the processes
    assert len(openai_server.requests) == seen


async def _split(first: str, second: str, key: str) -> list[httpx.Response]:
    """Three turns on each server at once."""
    ones, twos = await asyncio.gather(
        ask_all(first, key, ["s0", "s1", "s2"]), ask_all(second, key, ["s3", "s4", "s5"])
    )
    return ones + twos


def _store(kind: str, where: str) -> Any:
    from holodeck.sessions import PostgresSessionStore, RedisSessionStore, SqliteSessionStore

    if kind == "sqlite":
        return SqliteSessionStore(where)
    if kind == "redis":
        return RedisSessionStore(where)
    return PostgresSessionStore(where)


@pytest.mark.parametrize("kind", ["sqlite", "redis", "postgres"])
def test_holds_taken_at_once_through_two_store_objects_never_pass_the_cap(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    from decimal import Decimal

    from holodeck.sessions import settle_hold, take_hold, used_of

    where = str(tmp_path / "s.db") if kind == "sqlite" else request.getfixturevalue(f"{kind}_url")
    key = f"day-{uuid.uuid4().hex}"
    cap, one = {"requests": Decimal(4)}, {"requests": Decimal(1)}

    async def main() -> tuple[int, dict[str, Decimal], str | None]:
        async with _store(kind, where) as first, _store(kind, where) as second:
            stores = [first, second] * 10
            taken = await asyncio.gather(
                *(
                    store.update_counters(
                        key, lambda data: take_hold(data, cap, one, 0.0, 60), keep_s=60
                    )
                    for store in stores
                )
            )
            holds = [t.hold for t in taken if t.hold is not None]
            for hold in holds:
                await first.update_counters(
                    key, lambda data, h=hold: settle_hold(data, h, one, 0.0), keep_s=60
                )
        async with _store(kind, where) as restarted:  # another process, later
            after = await restarted.update_counters(
                key, lambda data: take_hold(data, cap, one, 0.0, 60), keep_s=60
            )
            used = await restarted.update_counters(key, lambda d: (d or b"", used_of(d)), keep_s=60)
        return len(holds), used, after.full

    granted, used, full = asyncio.run(main())
    assert granted == 4
    assert used == {"requests": Decimal(4)}
    assert full == "requests"
