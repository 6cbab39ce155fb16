"""Long-term memory (`memory.long_term`): the `remember`, `recall` and `forget` tools
across sessions of one user and never across users, recall before a turn within its
budget, extraction after a turn by a model call, retention and guardrail redaction of
what is stored. Models are the scripted OpenAI-compatible server (the real openai SDK
over real HTTP); memories live in the embedded store on disk."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.memory import Memory, MemoryOwner, open_bank
from holodeck.memory._placement import collection_of
from holodeck.runtime import Agent, FinalMessage, RunOptions, tool_context
from holodeck.search.embeddings._protocol import producer_of
from holodeck.search.stores import open_store
from holodeck.spec import SpecError
from scripted_servers import Call, EmbeddingsServer, OpenAIServer, text, tool_calls

pytestmark = pytest.mark.anyio

openai_server = scripted_servers.openai_server
embeddings_server = scripted_servers.embeddings_server


def memory_agent(
    server: OpenAIServer, embeddings: EmbeddingsServer, long_term: str, extra: str = ""
) -> dict[str, str]:
    return {
        "agent.yaml": (
            "name: helper\n"
            f"model: {{provider: openai, name: gpt-4o-mini, endpoint: {server.url}, "
            "api_key: sk-test}\n"
            "embedding_provider: {provider: openai, name: text-embedding-3-small, "
            f"endpoint: {embeddings.url}, api_key: sk-embed}}\n"
            "instructions: {inline: Help the user.}\n"
            f"memory:\n  long_term: {long_term}\n{extra}"
        )
    }


async def say(agent: Agent, message: str, *, user: str | None, session: str) -> str:
    conversation = agent.session(session)
    conversation.user = user
    final = None
    async for event in conversation.run(message):
        if isinstance(event, FinalMessage):
            final = event
    await conversation.aclose()
    assert final is not None
    return final.text


def sent_text(body: dict[str, Any]) -> str:
    """Everything a chat request carried, as text (instructions, messages, tool results)."""
    return json.dumps(body["messages"])


async def test_a_fact_remembered_in_one_session_is_recalled_in_another_of_the_same_user_only(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    root = write(memory_agent(openai_server, embeddings_server, "{}"))
    openai_server.script(
        tool_calls(Call("remember", {"fact": "Alice drinks oolong tea"})),
        text("Noted."),
        tool_calls(Call("recall", {"query": "tea"})),
        text("Oolong."),
        tool_calls(Call("recall", {"query": "tea"})),
        text("I do not know."),
    )
    async with Agent(load_agent(root)) as agent:
        await say(agent, "I drink oolong tea", user="alice", session="s1")
        assert await say(agent, "what do I drink?", user="alice", session="s2") == "Oolong."
        await say(agent, "what do I drink?", user="bob", session="s3")
    bodies = openai_server.bodies()
    assert "Alice drinks oolong tea" in sent_text(bodies[3])  # alice's recall result
    assert "Alice drinks oolong tea" not in sent_text(bodies[5])  # bob's recall result
    assert "nothing remembered matches" in sent_text(bodies[5])


def system_text(body: dict[str, Any]) -> str:
    return " ".join(
        m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
        for m in body["messages"]
        if m["role"] in ("system", "developer")
    )


async def seeded(root: Path, user: str, *facts: str) -> list[str]:
    spec = load_agent(root)
    bank = open_bank(spec, tool_context(spec, RunOptions().for_agent(spec)))
    assert bank is not None
    async with bank:
        kept = [await bank.remember(MemoryOwner(user), fact) for fact in facts]
    return [memory.id for memory, _ in kept]


async def stored(root: Path, user: str) -> list[str]:
    spec = load_agent(root)
    bank = open_bank(spec, tool_context(spec, RunOptions().for_agent(spec)))
    assert bank is not None
    async with bank:
        return [m.text for m in await bank.memories(user)]


async def test_recall_before_a_turn_puts_the_users_memories_in_the_instructions_within_budget(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    long_term = "{recall: {auto: true, top_k: 3, max_tokens: 12}}"
    root = write(memory_agent(openai_server, embeddings_server, long_term))
    await seeded(root, "alice", "Alice likes green tea", "Alice likes black tea with milk")
    await seeded(root, "bob", "Bob likes tea from Taiwan")
    openai_server.script(text("Green tea."), text("Tea."), text("No idea."))
    async with Agent(load_agent(root)) as agent:
        await say(agent, "which tea do I like?", user="alice", session="a")
        await say(agent, "which tea do I like?", user="bob", session="b")
        await say(agent, "hello", user="carol", session="c")
    alice, bob, carol = (system_text(b) for b in openai_server.bodies())
    assert "Long-term memories" in alice
    assert alice.count("- [") == 1  # 12 tokens (~48 characters) hold one of the two
    assert "Alice likes" in alice and "Bob" not in alice
    assert "Bob likes tea from Taiwan" in bob and "Alice" not in bob
    assert "Long-term memories" not in carol


async def test_without_auto_recall_the_instructions_carry_no_memories(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    root = write(memory_agent(openai_server, embeddings_server, "{}"))
    await seeded(root, "alice", "Alice likes green tea")
    openai_server.script(text("Tea."))
    async with Agent(load_agent(root)) as agent:
        await say(agent, "which tea do I like?", user="alice", session="a")
    assert "Alice likes green tea" not in system_text(openai_server.bodies()[0])


async def test_extraction_keeps_new_facts_skips_known_ones_and_replaces_a_contradicted_one(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    root = write(memory_agent(openai_server, embeddings_server, "{extract: {auto: true}}"))
    async with Agent(load_agent(root)) as agent:
        openai_server.script(
            text("Nice city."),
            tool_calls(Call("memories", {"facts": [{"text": "Alice lives in Lyon"}]})),
        )
        await say(agent, "I live in Lyon", user="alice", session="s1")
        assert await stored(root, "alice") == ["Alice lives in Lyon"]
        [lyon] = await seeded(root, "alice", "alice lives in lyon.")  # the same, known
        openai_server.script(
            text("Paris then."),
            tool_calls(
                Call(
                    "memories",
                    {
                        "facts": [
                            {"text": "Alice lives in Lyon"},
                            {"text": "Alice lives in Paris", "replaces": lyon},
                        ]
                    },
                )
            ),
        )
        await say(agent, "I moved to Paris", user="alice", session="s2")
    assert await stored(root, "alice") == ["Alice lives in Paris"]
    extraction = openai_server.bodies()[3]
    assert extraction["tools"][0]["function"]["name"] == "memories"
    asked = sent_text(extraction)
    assert f"[{lyon}] Alice lives in Lyon" in asked  # what is known goes with the exchange
    assert "I moved to Paris" in asked and "Paris then." in asked


async def test_session_scope_keeps_memories_to_their_session(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    root = write(memory_agent(openai_server, embeddings_server, "{scope: session}"))
    openai_server.script(
        tool_calls(Call("remember", {"fact": "The order number is 4411"})),
        text("Noted."),
        tool_calls(Call("recall", {"query": "order number"})),
        text("4411."),
        tool_calls(Call("recall", {"query": "order number"})),
        text("Which order?"),
    )
    async with Agent(load_agent(root)) as agent:
        await say(agent, "my order is 4411", user="alice", session="s1")
        await say(agent, "what is my order?", user="alice", session="s1")
        await say(agent, "what is my order?", user="alice", session="s2")
    bodies = openai_server.bodies()
    assert "4411" in json.dumps(bodies[3]["messages"][-1])
    assert "nothing remembered matches" in json.dumps(bodies[5]["messages"][-1])


async def test_agent_scope_is_one_set_of_memories_for_every_user(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    root = write(memory_agent(openai_server, embeddings_server, "{scope: agent}"))
    openai_server.script(
        tool_calls(Call("remember", {"fact": "The office closes at six"})),
        text("Noted."),
        tool_calls(Call("recall", {"query": "office closes"})),
        text("Six."),
    )
    async with Agent(load_agent(root)) as agent:
        await say(agent, "the office closes at six", user="alice", session="s1")
        await say(agent, "when does the office close?", user="bob", session="s2")
    assert "The office closes at six" in json.dumps(openai_server.bodies()[3]["messages"][-1])


async def test_forget_deletes_a_memory_of_the_user_and_not_anothers(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    root = write(memory_agent(openai_server, embeddings_server, "{}"))
    [alices] = await seeded(root, "alice", "Alice is allergic to nuts")
    openai_server.script(
        tool_calls(Call("forget", {"memory_id": alices})),
        text("I cannot."),
        tool_calls(Call("forget", {"memory_id": alices})),
        text("Forgotten."),
    )
    async with Agent(load_agent(root)) as agent:
        await say(agent, "forget that", user="bob", session="b")
        assert await stored(root, "alice") == ["Alice is allergic to nuts"]
        await say(agent, "forget that", user="alice", session="a")
    assert await stored(root, "alice") == []
    assert "no remembered fact" in json.dumps(openai_server.bodies()[1]["messages"][-1])


async def test_what_is_stored_passes_the_input_guardrails_redactions(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    guard = "guardrails:\n  input:\n    - {pii: [email], action: redact}\n"
    root = write(memory_agent(openai_server, embeddings_server, "{}", guard))
    openai_server.script(
        tool_calls(Call("remember", {"fact": "Alice writes from alice@example.com"})),
        text("Noted."),
    )
    async with Agent(load_agent(root)) as agent:
        await say(agent, "remember my address", user="alice", session="a")
    [kept] = await stored(root, "alice")
    assert "alice@example.com" not in kept and kept.startswith("Alice writes from")


async def test_memories_older_than_retention_days_are_deleted(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    root = write(memory_agent(openai_server, embeddings_server, "{retention_days: 30}"))
    [recent] = await seeded(root, "alice", "Alice plays chess")
    spec = load_agent(root)
    bank = open_bank(spec, tool_context(spec, RunOptions().for_agent(spec)))
    assert bank is not None and bank.embedder is not None
    old = Memory("old0000000000001", "Alice played golf", time.time() - 31 * 86400)
    vectors = await bank.embedder.embed([old.text])
    name = collection_of("helper", "alice", producer_of(bank.embedder))
    async with open_store(bank.location, name, int(vectors.shape[1])) as store:
        await store.replace_file(old.as_file(), [old.as_chunk()], vectors)
        assert len(await store.files()) == 2
    assert await stored(root, "alice") == ["Alice plays chess"]
    async with open_store(bank.location, name, int(vectors.shape[1])) as store:
        assert list(await store.files()) == [recent]


async def test_omnigent_hindsight_retain_and_recall_are_long_term_memory_under_their_names(
    write: Write,
    openai_server: OpenAIServer,
    embeddings_server: EmbeddingsServer,
    isolated_home: Path,
) -> None:
    (isolated_home / "config.yaml").write_text(
        f"providers:\n  embedder: {{provider: openai, endpoint: '{embeddings_server.url}', "
        "api_key: sk-embed}\n",
        encoding="utf-8",
    )
    root = write(
        {
            "config.yaml": (
                "spec_version: 1\nname: omni\n"
                "executor:\n  model: openai/gpt-4o-mini\n"
                f"  auth: {{type: api_key, base_url: '{openai_server.url}', api_key: sk-test}}\n"
                "tools:\n  builtins: [hindsight_retain, hindsight_recall]\n"
                "memory:\n  long_term: {embedding_model: embedder/text-embedding-3-small}\n"
            ),
            "AGENTS.md": "Use hindsight_retain to keep facts and hindsight_recall to find them.\n",
        }
    )
    spec = load_agent(root)
    assert spec.memory.long_term is not None
    assert spec.memory.long_term.tool_names == {
        "remember": "hindsight_retain",
        "recall": "hindsight_recall",
    }
    openai_server.script(
        tool_calls(Call("hindsight_retain", {"fact": "Dana runs the Oslo office"})),
        text("Noted."),
        tool_calls(Call("hindsight_recall", {"query": "Oslo office"})),
        text("Dana."),
    )
    async with Agent(spec) as agent:
        await say(agent, "Dana runs the Oslo office", user="dana", session="s1")
        await say(agent, "who runs the Oslo office?", user="dana", session="s2")
    bodies = openai_server.bodies()
    offered = {t["function"]["name"] for t in bodies[0]["tools"]}
    assert {"hindsight_retain", "hindsight_recall", "forget"} <= offered
    assert "remember" not in offered
    assert "Dana runs the Oslo office" in json.dumps(bodies[3]["messages"][-1])


def test_a_tool_named_as_a_memory_tool_is_an_error_saying_how_to_rename(write: Write) -> None:
    root = write(
        {
            "agent.yaml": (
                "name: helper\nmodel: {provider: test}\ninstructions: {inline: Help.}\n"
                "tools:\n  - {type: function, name: recall, description: Look up., "
                "file: tools.py, function: recall}\n"
                "memory:\n  long_term: {}\n"
            ),
            "tools.py": "def recall(query: str) -> str:\n    return query\n",
        }
    )
    with pytest.raises(SpecError) as caught:
        load_agent(root)
    said = "\n".join(e.render() for e in caught.value.errors)
    assert "`recall` is a long-term memory tool's" in said and "tool_names" in said
    renamed = (root / "agent.yaml").read_text().replace("{}", "{tool_names: {recall: memories}}")
    (root / "agent.yaml").write_text(renamed)
    assert load_agent(root).memory.long_term is not None


def test_test_cases_may_expect_the_memory_tools(write: Write) -> None:
    root = write(
        {
            "agent.yaml": (
                "name: helper\nmodel: {provider: test}\ninstructions: {inline: Help.}\n"
                "memory:\n  long_term: {}\n"
                "test_cases:\n  - {input: remember tea, expected_tools: [remember]}\n"
            )
        }
    )
    assert load_agent(root).test_cases[0].expected_tools == ["remember"]


def test_config_yaml_gives_long_term_memory_to_agents_without_their_own(
    write: Write, isolated_home: Path
) -> None:
    (isolated_home / "config.yaml").write_text(
        "memory:\n  long_term: {scope: agent, retention_days: 9}\n", encoding="utf-8"
    )
    plain = write({"agent.yaml": "name: a\nmodel: {provider: test}\ninstructions: {inline: Hi.}\n"})
    memory = load_agent(plain).memory.long_term
    assert memory is not None and memory.scope == "agent" and memory.retention_days == 9
    own = write(
        {
            "agent.yaml": (
                "name: b\nmodel: {provider: test}\ninstructions: {inline: Hi.}\n"
                "memory:\n  long_term: {scope: session}\n"
            )
        }
    )
    mine = load_agent(own).memory.long_term
    assert mine is not None and mine.scope == "session" and mine.retention_days is None
