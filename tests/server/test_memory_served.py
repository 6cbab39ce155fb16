"""Long-term memory served: each API key's user (and the `user_id`s under that key) reaches
only its own memories, over /v1/chat and the key-scoped `/v1/memories` routes, in one
process and across two `holodeck deploy` processes sharing a PostgreSQL or Redis store.
The model is the offline `test` provider, told which tool to call with `/call`."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx2 as httpx
import openai
import pytest

from server_harness import Serve, agent_dir, deploy_process, log_lines, serve

__all__ = ["serve"]

KEYS = [{"name": "alice-app", "key": "key-alice-0001"}, {"name": "bob-app", "key": "key-bob-0001"}]
ALICE = {"Authorization": "Bearer key-alice-0001"}
BOB = {"Authorization": "Bearer key-bob-0001"}
REMEMBER = '/call remember {"fact": "The user keeps bees in Lyon"}'
RECALL = '/call recall {"query": "bees"}'


def memory_agent(root: Path, long_term: dict[str, Any], name: str = "keeper") -> Path:
    return agent_dir(
        root,
        name,
        memory={"long_term": long_term},
        deployment={"auth": {"type": "api_key", "api_keys": KEYS}},
    )


def chat(client: httpx.Client, message: str, headers: dict[str, str], **fields: Any) -> str:
    answer = client.post("/v1/chat", json={"message": message, **fields}, headers=headers)
    assert answer.status_code == 200, answer.text
    calls = answer.json()["tool_calls"]
    return json.dumps([call["result"] for call in calls])


NAMED_KEYS = tuple((k["name"], k["key"]) for k in KEYS)


def test_each_key_and_user_id_reaches_only_its_own_memories(
    tmp_path: Path, serve: Serve, isolated_home: Path
) -> None:
    root = memory_agent(tmp_path / "keeper", {})
    with serve(root, named_keys=NAMED_KEYS) as server:
        client = server.client
        assert "kept as" in chat(client, REMEMBER, ALICE)
        assert "bees in Lyon" in chat(client, RECALL, ALICE)  # another session, same key
        assert "bees in Lyon" not in chat(client, RECALL, BOB)
        # a user_id lives under the key that names it
        assert "bees in Lyon" not in chat(client, RECALL, ALICE, user_id="u1")
        chat(client, '/call remember {"fact": "u1 likes figs"}', ALICE, user_id="u1")
        assert "figs" in chat(client, '/call recall {"query": "figs"}', ALICE, user_id="u1")
        assert "figs" not in chat(client, '/call recall {"query": "figs"}', BOB, user_id="u1")

        listed = client.get("/v1/memories", headers=ALICE).json()
        assert [m["text"] for m in listed["memories"]] == ["The user keeps bees in Lyon"]
        assert client.get("/v1/memories", headers=BOB).json()["memories"] == []
        figs = client.get("/v1/memories", params={"user_id": "u1"}, headers=ALICE).json()
        [fig] = figs["memories"]
        assert fig["text"] == "u1 likes figs" and fig["created_at"] > 0
        assert client.get("/v1/memories").status_code == 401

        gone = client.delete(f"/v1/memories/{fig['id']}", params={"user_id": "u1"}, headers=BOB)
        assert gone.status_code == 404  # bob's u1 is another user
        gone = client.delete(f"/v1/memories/{fig['id']}", params={"user_id": "u1"}, headers=ALICE)
        assert gone.json() == {"deleted": 1}
        assert client.delete("/v1/memories", headers=ALICE).json() == {"deleted": 1}
        assert client.get("/v1/memories", headers=ALICE).json()["memories"] == []
        spaced = {"message": "hi", "user_id": "a b"}
        assert client.post("/v1/chat", json=spaced, headers=ALICE).status_code == 422
    lines = log_lines(isolated_home, "keeper")
    logged = [line for line in lines if str(line.get("endpoint", "")).startswith("/v1/memories")]
    # each request is a line, with its key (the refused one has none)
    assert len(logged) == 9
    assert {line.get("key") for line in logged} == {"alice-app", "bob-app", None}


def test_an_agent_without_long_term_memory_answers_404_on_memories(
    tmp_path: Path, serve: Serve
) -> None:
    root = agent_dir(
        tmp_path / "plain", "plain", deployment={"auth": {"type": "api_key", "api_keys": KEYS}}
    )
    with serve(root, named_keys=NAMED_KEYS) as server:
        answer = server.client.get("/v1/memories", headers=ALICE)
        assert answer.status_code == 404
        assert "memory.long_term" in answer.json()["error"]["hint"]


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["postgres", "redis"])
def test_two_deploy_processes_share_memories_and_keep_users_apart(
    tmp_path: Path, provider: str, request: pytest.FixtureRequest
) -> None:
    url: str = request.getfixturevalue(
        "pgvector_url" if provider == "postgres" else "redis_stack_url"
    )
    database = {"provider": provider, "connection_string": url}
    name = f"keeper{uuid.uuid4().hex[:8]}"  # the store outlives the test
    root = memory_agent(tmp_path / name, {"database": database}, name)
    with (
        deploy_process(str(root), "--model", "test") as (_, first_url),
        deploy_process(str(root), "--model", "test") as (_, second_url),
        httpx.Client(base_url=first_url, timeout=60) as first,
        httpx.Client(base_url=second_url, timeout=60) as second,
    ):
        assert "kept as" in chat(first, REMEMBER, ALICE)
        assert "bees in Lyon" in chat(second, RECALL, ALICE)
        assert "bees in Lyon" not in chat(second, RECALL, BOB)
        assert [
            m["text"] for m in second.get("/v1/memories", headers=ALICE).json()["memories"]
        ] == ["The user keeps bees in Lyon"]
        assert first.delete("/v1/memories", headers=ALICE).json() == {"deleted": 1}
        assert "bees in Lyon" not in chat(second, RECALL, ALICE)


def test_openais_user_field_is_the_memory_user_under_the_key(tmp_path: Path, serve: Serve) -> None:
    root = memory_agent(tmp_path / "keeper", {})
    with serve(root, named_keys=NAMED_KEYS) as server:
        alice = openai.OpenAI(base_url=server.url + "/v1", api_key="key-alice-0001", max_retries=0)
        alice.chat.completions.create(
            model="keeper",
            messages=[{"role": "user", "content": '/call remember {"fact": "u9 sails"}'}],
            user="u9",
        )
        alice.responses.create(
            model="keeper", input='/call remember {"fact": "u8 rows"}', user="u8"
        )
        listed = server.client.get("/v1/memories", params={"user_id": "u9"}, headers=ALICE)
        assert [m["text"] for m in listed.json()["memories"]] == ["u9 sails"]
        listed = server.client.get("/v1/memories", params={"user_id": "u8"}, headers=ALICE)
        assert [m["text"] for m in listed.json()["memories"]] == ["u8 rows"]
        assert "sails" in chat(
            server.client, '/call recall {"query": "sails"}', ALICE, user_id="u9"
        )
        assert "sails" not in chat(
            server.client, '/call recall {"query": "sails"}', BOB, user_id="u9"
        )
        try:
            alice.chat.completions.create(
                model="keeper", messages=[{"role": "user", "content": "hi"}], user="not a user"
            )
            raise AssertionError("a user with spaces was taken")
        except openai.BadRequestError as error:
            assert "user_id" in str(error) or "user id" in str(error)
