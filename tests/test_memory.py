"""Long-term memory (`memory.long_term`): the `remember`, `recall` and `forget` tools
across sessions of one user and never across users, recall before a turn within its
budget, extraction after a turn by a model call, retention and guardrail redaction of
what is stored. Models are the scripted OpenAI-compatible server (the real openai SDK
over real HTTP); memories live in the embedded store on disk."""

from __future__ import annotations

import json
from typing import Any

import pytest

import scripted_servers
from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, FinalMessage
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
