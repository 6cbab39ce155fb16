"""What long-term memory's extraction call spends is the session's: its tokens and
request are in the session's usage, and the session's caps count them. The agent and its
extractor are the scripted OpenAI-compatible server (the real openai SDK over real HTTP)."""

from __future__ import annotations

import pytest

import scripted_servers
from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.errors import LimitReached
from holodeck.runtime import Agent, FinalMessage, Session
from scripted_servers import Call, EmbeddingsServer, OpenAIServer, Reply, tool_calls

pytestmark = pytest.mark.anyio

openai_server = scripted_servers.openai_server
embeddings_server = scripted_servers.embeddings_server


def agent_yaml(server: OpenAIServer, embeddings: EmbeddingsServer, limits: str = "") -> str:
    return (
        "name: helper\n"
        f"model: {{provider: openai, name: gpt-4o-mini, endpoint: {server.url}, "
        "api_key: sk-test}\n"
        "embedding_provider: {provider: openai, name: text-embedding-3-small, "
        f"endpoint: {embeddings.url}, api_key: sk-embed}}\n"
        "instructions: {inline: Help the user.}\n"
        "memory:\n  long_term: {extract: {auto: true}}\n" + limits
    )


def extracted(fact: str, tokens: int) -> Reply:
    call = tool_calls(Call("memories", {"facts": [{"text": fact}]}))
    return Reply(calls=call.calls, input_tokens=tokens, output_tokens=20)


async def say(session: Session, message: str) -> str:
    final = None
    async for event in session.run(message):
        if isinstance(event, FinalMessage):
            final = event
    assert final is not None
    return final.text


async def test_the_extraction_calls_tokens_are_in_the_sessions_usage(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    root = write({"agent.yaml": agent_yaml(openai_server, embeddings_server)})
    openai_server.script(
        Reply(text="Nice city.", input_tokens=100, output_tokens=10),
        extracted("The user lives in Lyon", 300),
    )
    async with Agent(load_agent(root)) as agent:
        session = agent.session("s1")
        await say(session, "I live in Lyon")
        await session.aclose()
    used = session.spend.usage
    assert (used.requests, used.input_tokens, used.output_tokens) == (2, 400, 30)


async def test_the_sessions_token_cap_counts_what_extraction_spent(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    # the answer alone (110 tokens) stays under the cap; with its extraction (320) it is over
    limits = "limits:\n  session: {max_tokens: 200}\n"
    root = write({"agent.yaml": agent_yaml(openai_server, embeddings_server, limits)})
    openai_server.script(
        Reply(text="Nice city.", input_tokens=100, output_tokens=10),
        extracted("The user lives in Lyon", 300),
        Reply(text="Never sent.", input_tokens=100, output_tokens=10),
    )
    async with Agent(load_agent(root)) as agent:
        session = agent.session("s1")
        await say(session, "I live in Lyon")
        with pytest.raises(LimitReached):
            await say(session, "And I like tea")
        await session.aclose()
    assert len(openai_server.bodies()) == 2  # the next turn was refused before its request
