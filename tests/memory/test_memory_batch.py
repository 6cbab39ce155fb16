"""`MemoryBank.remember_many`: many memories written a batch per transaction, which are
then what `remember` would have kept: listed, recalled by their words and vectors (the
scripted embeddings server), forgotten one by one, and seen by another bank on the same
store. The store is the embedded one on disk."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.memory import MemoryBank, MemoryOwner, open_bank
from holodeck.runtime import RunOptions, tool_context
from scripted_servers import EmbeddingsServer

pytestmark = pytest.mark.anyio

embeddings_server = scripted_servers.embeddings_server


def bank(root: Path) -> MemoryBank:
    spec = load_agent(root)
    found = open_bank(spec, tool_context(spec, RunOptions().for_agent(spec)))
    assert found is not None
    return found


def agent(write: Write, server: EmbeddingsServer) -> Path:
    return write(
        {
            "agent.yaml": (
                "name: helper\n"
                "model: {provider: openai, name: gpt-4o-mini, api_key: sk-test}\n"
                "embedding_provider: {provider: openai, name: text-embedding-3-small, "
                f"endpoint: {server.url}, api_key: sk-embed}}\n"
                "instructions: {inline: Help the user.}\n"
                "memory: {long_term: {}}\n"
            )
        }
    )


async def test_memories_written_in_batches_are_listed_recalled_and_forgotten(
    write: Write, embeddings_server: EmbeddingsServer
) -> None:
    root = agent(write, embeddings_server)
    alice = MemoryOwner("alice")
    facts = [f"Fact {n}: Alice keeps item{n} in drawer{n % 7}" for n in range(2500)]
    async with bank(root) as memories:
        kept = await memories.remember_many(alice, [*facts, "  "], batch=1000)
        assert [m.text for m in kept] == facts  # the blank one is left out
        found = await memories.recall(alice, facts[1234], 3)
        assert found[0].text == facts[1234]
        assert await memories.forget(alice, kept[1234].id)
    async with bank(root) as again:  # another bank on the store
        listed = await again.memories("alice")
        assert len(listed) == 2499 and facts[1234] not in {m.text for m in listed}
        assert await again.memories("bob") == []
    # the texts are embedded a batch at a time, not one request each
    assert max(len(texts) for texts in embeddings_server.inputs()) >= 100


async def test_a_batch_is_one_transaction_of_the_store(
    write: Write, embeddings_server: EmbeddingsServer
) -> None:
    root = agent(write, embeddings_server)
    traced: list[str] = []  # the statements run on the memories' store (not the cache's)
    original = sqlite3.connect

    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        db = original(*args, **kwargs)  # type: ignore[arg-type]
        if str(args[0]).endswith("chunks.sqlite3"):
            db.set_trace_callback(traced.append)
        return db

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sqlite3, "connect", connect)
        async with bank(root) as memories:
            alice = MemoryOwner("alice")
            await memories.remember(alice, "Alice is here")  # the store opened
            before = sum(s.startswith("BEGIN IMMEDIATE") for s in traced)
            await memories.remember_many(alice, [f"fact {n}" for n in range(300)])
            after = sum(s.startswith("BEGIN IMMEDIATE") for s in traced)
    assert after - before == 1


async def test_a_bank_with_the_store_open_finds_memories_another_wrote_in_a_batch(
    write: Write, embeddings_server: EmbeddingsServer
) -> None:
    root = agent(write, embeddings_server)
    alice = MemoryOwner("alice")
    async with bank(root) as reader, bank(root) as writer:
        await reader.remember(alice, "Alice has a cat")  # the reader's store is open
        facts = [f"Fact {n}: Alice keeps item{n} in drawer{n % 7}" for n in range(50)]
        await writer.remember_many(alice, facts)
        store = await reader._store("alice")
        vector = await embeddings_server_vector(reader, facts[17])
        nearest = await store.nearest(vector, 1)  # by vector alone: the batch's rows seen
        assert nearest[0].chunk.text == facts[17]


async def embeddings_server_vector(memories: MemoryBank, text: str) -> Any:
    assert memories.embedder is not None
    return (await memories.embedder.embed([text]))[0]
