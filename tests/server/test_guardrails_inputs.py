"""Every input that reaches the model passes the input checks, whichever surface brought
it: earlier messages and system messages a client replays on /v1/chat/completions, text
attachments (/v1/chat/completions, AG-UI, A2A), an MCP tool's argument, and, with
`on: [tool_result]`, what a tool returned. Each test serves an agent image on loopback
with its model a scripted OpenAI-compatible server that records what it was sent."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
from conftest import Write
from holodeck import load_agent
from holodeck.errors import DefinitionError
from scripted_servers import Call, OpenAIServer, text, tool_calls
from server_harness import Serve
from yaml_dump import dump

openai_server = scripted_servers.openai_server

REFUSAL = "I cannot help with passwords."
CARD = "4111 1111 1111 1111"  # a Luhn-valid test number
CHECKS = [
    {"name": "no-secrets", "block_keywords": ["password"], "message": REFUSAL},
    {"name": "no-cards", "pii": ["card"], "action": "redact"},
]
LEAKY_TOOL = '''
def lookup(query: str) -> str:
    """Look an order up.

    Args:
        query: the order
    """
    if query == "secret":
        return "the admin password is swordfish"
    return "paid with card 4111 1111 1111 1111"
'''


def image(write: Write, server: OpenAIServer, **guardrails: Any) -> Path:
    config = {
        "spec_version": 1,
        "name": "orders",
        "executor": {
            "model": "openai/gpt-4o-mini",
            "connection": {"api_key": "sk-x", "base_url": server.url},
        },
        "interaction": {"modalities": {"input": ["text", "file"]}},
        "guardrails": guardrails or {"input": CHECKS},
    }
    return write(
        {
            "config.yaml": dump(config),
            "AGENTS.md": "You answer questions about orders.",
            "tools/python/tools.py": LEAKY_TOOL,
        }
    )


def sent(server: OpenAIServer) -> str:
    """Everything the model was sent, as one text."""
    return "\n".join(json.dumps(r.body, ensure_ascii=False) for r in server.requests)


def b64(data: str) -> str:
    return base64.b64encode(data.encode()).decode()


def completion(server: Any, *messages: dict[str, Any]) -> dict[str, Any]:
    body = {"model": "orders", "messages": list(messages)}
    response = server.client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    choice: dict[str, Any] = response.json()["choices"][0]
    return choice


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def test_openai_checks_earlier_and_system_messages_not_only_the_last(
    write: Write, openai_server: OpenAIServer, serve: Serve
) -> None:
    root = image(write, openai_server)
    openai_server.script(text("It ends in 1111."))
    with serve(root, model=None) as server:
        earlier = completion(
            server,
            user("my password is hunter2"),
            {"role": "assistant", "content": "Noted."},
            user("what did I say?"),
        )
        system = completion(
            server, {"role": "system", "content": "Tell them the password."}, user("hello")
        )
        assert openai_server.requests == []  # neither reached the model
        redacted = completion(
            server,
            user(f"I paid with {CARD}"),
            {"role": "assistant", "content": "Thanks."},
            user("which card did I use?"),
        )
    for blocked in (earlier, system):
        assert blocked["finish_reason"] == "content_filter"
        assert blocked["message"]["content"] == REFUSAL
    assert redacted["finish_reason"] == "stop"
    assert redacted["message"]["content"] == "It ends in 1111."
    assert CARD not in sent(openai_server) and "[card]" in sent(openai_server)


def test_text_attachments_are_checked_on_openai_agui_and_a2a(
    write: Write, openai_server: OpenAIServer, serve: Serve
) -> None:
    root = image(write, openai_server)
    openai_server.script(text("Noted."), text("Noted again."))
    note = [{"type": "text", "text": "Read my note."}]
    with serve(root, model=None) as server:
        url = f"data:text/plain;base64,{b64('the password is hunter2')}"
        blocked = completion(
            server, user([*note, {"type": "image_url", "image_url": {"url": url}}])
        )
        assert openai_server.requests == []

        card = {"type": "data", "value": b64(f"card: {CARD}"), "mimeType": "text/plain"}
        run = {
            "threadId": "t-1",
            "runId": "r-1",
            "messages": [
                {
                    "id": "m-1",
                    "role": "user",
                    "content": [*note, {"type": "document", "source": card}],
                }
            ],
            "state": {},
            "tools": [],
            # context reaches the model with the user's message, and is checked with it
            "context": [{"description": "account", "value": "gold tier"}],
            "forwardedProps": {},
        }
        agui = server.client.post("/awp", json=run)
        assert agui.status_code == 200, agui.text
        agui_sent = sent(openai_server)
        secret = [{"description": "account", "value": "the password is hunter2"}]
        agui_blocked = server.client.post(
            "/awp", json={**run, "threadId": "t-2", "runId": "r-2", "context": secret}
        )

        a2a = asyncio.run(a2a_send(server.url, "the password is hunter2"))
        a2a_card = asyncio.run(a2a_send(server.url, f"card: {CARD}"))
    assert blocked["finish_reason"] == "content_filter"
    assert blocked["message"]["content"] == REFUSAL
    assert "[card]" in agui_sent and CARD not in agui_sent and "gold tier" in agui_sent
    assert "Noted." in agui.text
    assert agui_blocked.status_code == 200 and REFUSAL in agui_blocked.text
    assert REFUSAL in a2a
    assert "Noted again." in a2a_card
    everything = sent(openai_server)
    assert "hunter2" not in everything and CARD not in everything
    assert len(openai_server.requests) == 2  # the AG-UI run and the A2A card note


async def a2a_send(url: str, note: str) -> str:
    """The answer's text to an A2A message of a question and a text/plain file part."""
    from a2a.types import Message, Part, Role, SendMessageRequest

    from test_serve_a2a import connect

    client = await connect(url + "/a2a/orders")
    message = Message(message_id="m-" + str(abs(hash(note))), role=Role.ROLE_USER)
    message.parts.append(Part(text="Read my note."))
    message.parts.append(Part(raw=note.encode(), media_type="text/plain", filename="n.txt"))
    responses = [r async for r in client.send_message(SendMessageRequest(message=message))]
    await client.close()
    return str(responses)


def test_an_mcp_question_is_checked_before_the_model(
    write: Write, openai_server: OpenAIServer, serve: Serve
) -> None:
    from test_serve_mcp import http_client

    root = image(write, openai_server)
    openai_server.script(text("Got it."))

    async def use(url: str) -> tuple[Any, Any]:
        async with http_client(url) as session:
            blocked = await session.call_tool("orders", {"question": "my password is x"})
            redacted = await session.call_tool("orders", {"question": f"I paid with {CARD}"})
            return blocked, redacted

    with serve(root, model=None) as server:
        blocked, redacted = asyncio.run(use(server.url))
    assert REFUSAL in blocked.content[0].text
    assert "Got it." in redacted.content[0].text
    assert len(openai_server.requests) == 1
    assert CARD not in sent(openai_server) and "[card]" in sent(openai_server)


def test_tool_results_pass_checks_that_run_on_them(
    write: Write, openai_server: OpenAIServer, serve: Serve
) -> None:
    on_results = [{**check, "on": ["tool_result"]} for check in CHECKS]
    root = image(write, openai_server, input=on_results)
    openai_server.script(
        tool_calls(Call("tools", {"query": "order 7"}, id="c1")),
        text("Paid by card."),
        tool_calls(Call("tools", {"query": "secret"}, id="c2")),
        text("I cannot say."),
    )
    with serve(root, model=None) as server:
        first = server.chat("how was order 7 paid? my password is open")
        second = server.chat("what is the admin secret?")
    assert first.json()["response"] == "Paid by card."
    assert second.json()["response"] == "I cannot say."
    results = [
        m["content"]
        for r in openai_server.requests
        for m in r.body["messages"]
        if m["role"] == "tool"
    ]
    assert results[0] == "paid with card [card]"
    assert results[-1] == REFUSAL  # the blocked result never reached the model
    assert "swordfish" not in sent(openai_server)
    # these checks run on tool results only: the question went through as asked
    assert "my password is open" in sent(openai_server)
    hits = [(h["guardrail"], h["action"]) for h in second.json()["guardrails"]]
    assert hits == [("no-secrets", "block")]


@pytest.mark.parametrize(
    ("side", "on", "says"),
    [
        ("output", ["tool_result"], "goes under `input:`"),
        ("input", ["response"], "under `output:`"),
    ],
)
def test_a_check_on_the_wrong_side_says_where_it_goes(
    write: Write, openai_server: OpenAIServer, side: str, on: list[str], says: str
) -> None:
    root = image(write, openai_server, **{side: [{"block_keywords": ["x"], "on": on}]})
    with pytest.raises(DefinitionError) as raised:
        load_agent(root)
    assert says in str(raised.value) and "config.yaml" in str(raised.value)
