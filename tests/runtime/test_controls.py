"""Spend caps, fallback models and tool policies, run by the runtime against a scripted
OpenAI-compatible server on 127.0.0.1 (the real openai SDK over real HTTP)."""

from __future__ import annotations

import asyncio
from typing import Any

import scripted_servers
from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.errors import LimitReached, meaning_of
from holodeck.runtime import Agent, FinalMessage
from scripted_servers import Call, OpenAIServer, closed_port_url, server_error, text, tool_calls
from yaml_dump import dump

openai_server = scripted_servers.openai_server

LOOKUP_TOOL = '''
def lookup(query: str) -> str:
    """Look something up.

    Args:
        query: what to look up
    """
    return "nothing found"


def secret(query: str) -> str:
    """Read a secret.

    Args:
        query: which secret
    """
    return "s3cret"
'''
TOOLS = [
    {"type": "function", "name": n, "file": "tools.py", "function": n} for n in ("lookup", "secret")
]


def agent_files(server: OpenAIServer, **extra: Any) -> dict[str, str]:
    model = {"provider": "openai", "name": "gpt-4o-mini", "endpoint": server.url, "api_key": "sk-x"}
    model.update(extra.pop("model", {}))
    spec = {
        "name": "demo",
        "model": model,
        "instructions": {"inline": "You look things up."},
        "tools": TOOLS,
        "execution": {"max_retries": 0},
        **extra,
    }
    return {"agent.yaml": dump(spec), "tools.py": LOOKUP_TOOL}


def looping(n: int) -> list[Any]:
    """A model that keeps calling `lookup`."""
    return [tool_calls(Call("lookup", {"query": f"try {i}"}, id=f"c{i}")) for i in range(n)]


async def ask(agent: Agent, *prompts: str) -> list[FinalMessage | BaseException]:
    """Each prompt as a turn of one session: its final message, or the error it raised."""
    out: list[FinalMessage | BaseException] = []
    async with agent, agent.session() as session:
        for prompt in prompts:
            try:
                out.append(await session.answer(prompt))
            except LimitReached as exc:
                out.append(exc)
    return out


def test_a_turn_cap_stops_a_model_that_keeps_calling_tools(
    write: Write, openai_server: OpenAIServer
) -> None:
    root = write(agent_files(openai_server, limits={"turn": {"max_tool_calls": 3}}))
    openai_server.script(*looping(10))

    (outcome,) = asyncio.run(ask(Agent(load_agent(root)), "find it"))

    assert isinstance(outcome, LimitReached)
    assert outcome.cap == "limits.turn.max_tool_calls"
    assert meaning_of(outcome).status == 429 and meaning_of(outcome).kind == "limit_reached"
    assert len(openai_server.requests) == 4  # three calls ran; the fourth was refused


def test_a_session_at_its_cost_budget_refuses_the_next_turn_and_keeps_no_stopped_turn(
    write: Write, openai_server: OpenAIServer
) -> None:
    # gpt-4o-mini: $0.15 / M input tokens; each reply here costs 1M input tokens' worth
    root = write(agent_files(openai_server, limits={"session": {"max_cost_usd": 0.2}}))
    openai_server.script(
        text("first", input_tokens=1_000_000, output_tokens=1),
        text("second", input_tokens=1_000_000, output_tokens=1),
        text("never sent", input_tokens=1, output_tokens=1),
    )
    agent = Agent(load_agent(root))

    first, second, third = asyncio.run(ask(agent, "one", "two", "three"))

    assert isinstance(first, FinalMessage) and first.text == "first"
    assert isinstance(second, LimitReached)  # $0.30 > $0.20: stopped after the answer came
    assert second.cap == "limits.session.max_cost_usd"
    assert isinstance(third, LimitReached) and "has reached" in third.message
    assert len(openai_server.requests) == 2  # the third turn never reached the model


def test_a_fallback_answers_when_the_first_model_fails(
    write: Write, openai_server: OpenAIServer
) -> None:
    root = write(agent_files(openai_server, model={"fallbacks": ["backup/gpt-4o"]}))
    config = {"providers": {"backup": {"provider": "openai", "endpoint": openai_server.url}}}
    (root / "config.yaml").write_text(dump(config), encoding="utf-8")
    openai_server.script(server_error(), text("from the backup"))

    (final,) = asyncio.run(
        ask(Agent(load_agent(root), RunOptions(env={"OPENAI_API_KEY": "k"})), "hi")
    )

    assert isinstance(final, FinalMessage) and final.text == "from the backup"
    assert final.model == "gpt-4o"
    assert [r.body["model"] for r in openai_server.requests] == ["gpt-4o-mini", "gpt-4o"]


def test_a_denied_tool_is_never_offered_to_the_model(
    write: Write, openai_server: OpenAIServer
) -> None:
    root = write(agent_files(openai_server, tools_policy={"deny": ["sec*"]}))
    openai_server.script(text("done"))

    asyncio.run(ask(Agent(load_agent(root)), "hi"))

    offered = [t["function"]["name"] for t in openai_server.requests[0].body["tools"]]
    assert offered == ["lookup"]


def test_a_fallback_answers_when_the_first_models_server_cannot_be_reached(
    write: Write, openai_server: OpenAIServer
) -> None:
    root = write(agent_files(openai_server, model={"fallbacks": ["backup/gpt-4o"]}))
    spec = (root / "agent.yaml").read_text(encoding="utf-8")
    (root / "agent.yaml").write_text(spec.replace(openai_server.url, closed_port_url()))
    config = {"providers": {"backup": {"provider": "openai", "endpoint": openai_server.url}}}
    (root / "config.yaml").write_text(dump(config), encoding="utf-8")
    openai_server.script(text("from the backup"))

    agent = Agent(load_agent(root), RunOptions(env={"OPENAI_API_KEY": "k"}))
    (final,) = asyncio.run(ask(agent, "hi"))

    assert isinstance(final, FinalMessage) and final.model == "gpt-4o"


def test_an_images_limits_and_tools_policy_hold_as_agent_yamls_do(
    write: Write, openai_server: OpenAIServer
) -> None:
    config = {
        "spec_version": 1,
        "name": "omni",
        "executor": {
            "model": "openai/gpt-4o-mini",
            "connection": {"api_key": "sk-x", "base_url": openai_server.url},
        },
        "limits": {"turn": {"max_tool_calls": 1}},
        "tools_policy": {"deny": ["*_secret"]},
    }
    root = write({"config.yaml": dump(config), "tools/python/tools.py": LOOKUP_TOOL})
    calls = [Call("tools_lookup", {"query": "a"}, id=f"c{i}") for i in range(2)]
    openai_server.script(*(tool_calls(call) for call in calls))

    (outcome,) = asyncio.run(ask(Agent(load_agent(root)), "find it"))

    assert isinstance(outcome, LimitReached) and outcome.cap == "limits.turn.max_tool_calls"
    offered = [t["function"]["name"] for t in openai_server.requests[0].body["tools"]]
    assert offered == ["tools_lookup"]  # tools_secret is denied
