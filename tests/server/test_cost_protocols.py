"""The turn's cost where A2A and MCP report its usage: an A2A task's `metadata.holodeck.usage`
(answered, streamed and read back), and an MCP tool result's structured content (`/mcp`
and `holodeck mcp serve`), as `/v1/chat` reports it: `cost_usd` in US dollars, null when
the model has no price. Spoken to by the official a2a-sdk and mcp clients; the model is a
scripted OpenAI-compatible server answering with known token counts."""

from __future__ import annotations

import asyncio
import os
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, Task
from google.protobuf.json_format import MessageToDict

import scripted_servers
from conftest import Write
from scripted_servers import OpenAIServer, text
from server_harness import Serve
from yaml_dump import dump

openai_server = scripted_servers.openai_server

IN, OUT = 1000, 200  # tokens of every scripted answer
HOUSE_COST = {"input_per_million": 3, "output_per_million": 15}
HOUSE_TURN = float(Decimal(IN * 3 + OUT * 15) / 1_000_000)  # $0.006


def agent(server: OpenAIServer, **model: Any) -> dict[str, str]:
    spec = {
        "name": "priced",
        "model": {
            "provider": "openai",
            "name": "house-model",  # in no price list
            "endpoint": server.url,
            "api_key": "sk-x",
            **model,
        },
        "instructions": {"inline": "Answer briefly."},
        "execution": {"max_retries": 0},
    }
    return {"agent.yaml": dump(spec)}


def answers(server: OpenAIServer, n: int) -> None:
    server.script(*(text("fine", input_tokens=IN, output_tokens=OUT) for _ in range(n)))


def request(said: str) -> SendMessageRequest:
    sent = Message(message_id="m-" + said, role=Role.ROLE_USER)
    sent.parts.append(Part(text=said))
    return SendMessageRequest(message=sent)


def usage_of(metadata: Any) -> dict[str, Any]:
    found: dict[str, Any] = MessageToDict(metadata)["holodeck"]["usage"]
    return found


async def a2a_usages(url: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The usage of a task answered, of the same task read back, and of a streamed one's
    final status."""
    async with httpx.AsyncClient(timeout=60) as http:
        answering = ClientConfig(streaming=False, httpx_client=http)
        client = await ClientFactory(answering).create_from_url(url)
        (response,) = [r async for r in client.send_message(request("hi"))]
        task: Task = response.task
        read = await client.get_task(GetTaskRequest(id=task.id))
        config = ClientConfig(streaming=True, httpx_client=http)
        streaming = await ClientFactory(config).create_from_url(url)
        events = [e async for e in streaming.send_message(request("again"))]
    final = events[-1].status_update
    return usage_of(task.metadata), usage_of(read.metadata), usage_of(final.metadata)


def test_an_a2a_task_carries_the_turn_s_cost_in_its_holodeck_usage(
    write: Write, openai_server: OpenAIServer, serve: Serve
) -> None:
    root = write(agent(openai_server, cost=HOUSE_COST))
    answers(openai_server, 2)

    with serve(root, model=None) as server:
        answered, read, streamed = asyncio.run(a2a_usages(server.url))

    for usage in (answered, read, streamed):
        assert usage["cost_usd"] == HOUSE_TURN
        assert (usage["input_tokens"], usage["output_tokens"]) == (IN, OUT)


def test_an_unpriced_a2a_task_says_its_cost_is_null(
    write: Write, openai_server: OpenAIServer, serve: Serve
) -> None:
    root = write(agent(openai_server))
    answers(openai_server, 2)

    with serve(root, model=None) as server:
        answered, _, streamed = asyncio.run(a2a_usages(server.url))

    assert "cost_usd" in answered and answered["cost_usd"] is None
    assert streamed["cost_usd"] is None and streamed["input_tokens"] == IN


async def mcp_usage_over_http(url: str) -> dict[str, Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx.AsyncClient(timeout=60) as http,
        streamable_http_client(url + "/mcp", http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("priced", {"question": "hi"})
    assert not result.is_error
    usage: dict[str, Any] = result.structured_content["usage"]
    return usage


async def mcp_usage_over_stdio(root: Path) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = [sys.executable, "-m", "holodeck", "mcp", "serve", str(root)]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("priced", {"question": "hi"})
    assert not result.is_error
    usage: dict[str, Any] = result.structured_content["usage"]
    return usage


def test_an_mcp_tool_result_carries_the_turn_s_cost_over_http_and_stdio(
    write: Write, openai_server: OpenAIServer, serve: Serve
) -> None:
    root = write(agent(openai_server, cost=HOUSE_COST))
    answers(openai_server, 2)

    with serve(root, model=None) as server:
        over_http = asyncio.run(mcp_usage_over_http(server.url))
    over_stdio = asyncio.run(mcp_usage_over_stdio(root))

    assert over_http["cost_usd"] == HOUSE_TURN
    assert over_stdio["cost_usd"] == HOUSE_TURN
    assert over_stdio["input_tokens"] == IN


def test_an_unpriced_mcp_tool_result_over_stdio_says_its_cost_is_null(
    write: Write, openai_server: OpenAIServer
) -> None:
    root = write(agent(openai_server))
    answers(openai_server, 1)

    usage = asyncio.run(mcp_usage_over_stdio(root))

    assert "cost_usd" in usage and usage["cost_usd"] is None
