"""Handoffs served by `holodeck deploy`: a triage agent hands the conversation over to a
billing agent and back, against a scripted OpenAI-compatible model (the real OpenAI SDK
over real HTTP). /v1/chat's events and answer say who answers, the stored session keeps
it (another process sharing the store continues with billing), another key cannot read
it, and AG-UI (the official client), A2A (the a2a-sdk client) and /v1/responses show or
follow each handoff."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from google.protobuf.json_format import MessageToDict

import scripted_servers
from agui_client import run_client
from scripted_servers import Call, OpenAIServer, text, tool_calls
from server_harness import deploy_process, parse_sse
from yaml_dump import dump

openai_server = scripted_servers.openai_server

ALICE, BOB = "k-alice-secret", "k-bob-secret"
TRIAGE_SAYS = "You route customers to the right desk."
BILLING_SAYS = "You are the billing desk."
INVOICES = '''
def lookup_invoice(number: str) -> str:
    """Look up an invoice by its number."""
    return f"invoice {number}: 42 EUR, paid"
'''


def desks(root: Path, server: OpenAIServer) -> Path:
    """triage/agent.yaml handing over to billing/agent.yaml, both on the scripted model,
    behind two API keys, sessions in one SQLite file."""
    model = {"provider": "openai", "name": "gpt-4o-mini", "endpoint": server.url, "api_key": "x"}
    (root / "billing").mkdir(parents=True)
    (root / "billing" / "tools.py").write_text(INVOICES, encoding="utf-8")
    billing = {
        "name": "billing",
        "model": model,
        "instructions": {"inline": BILLING_SAYS},
        "tools": [
            {
                "type": "function",
                "name": "lookup_invoice",
                "file": "tools.py",
                "function": "lookup_invoice",
            }
        ],
        "execution": {"max_retries": 0},
    }
    (root / "billing" / "agent.yaml").write_text(dump(billing), encoding="utf-8")
    keys = [{"name": "alice", "key": ALICE}, {"name": "bob", "key": BOB}]
    triage = {
        "name": "triage",
        "model": model,
        "instructions": {"inline": TRIAGE_SAYS},
        "handoffs": [{"name": "billing", "path": "billing/agent.yaml"}],
        "memory": {"store": "sqlite", "url": str(root / "sessions.db")},
        "deployment": {"auth": {"type": "api_key", "api_keys": keys}},
        "execution": {"max_retries": 0},
    }
    (root / "agent.yaml").write_text(dump(triage), encoding="utf-8")
    return root


@pytest.fixture
def triage(tmp_path: Path, openai_server: OpenAIServer) -> Iterator[tuple[str, Path]]:
    root = desks(tmp_path / "desks", openai_server)
    env = {"HOLODECK_HOME": str(tmp_path / "home")}
    with deploy_process(str(root), env=env) as (_, url):
        yield url, root


def instructions(body: dict[str, Any]) -> str:
    """The system text of a request the model server received."""
    return "\n".join(
        str(m.get("content")) for m in body["messages"] if m["role"] in ("system", "developer")
    )


def client(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {key}"})


def chat_events(http: httpx.Client, message: str, **fields: Any) -> list[tuple[str, Any]]:
    body = {"message": message, "stream": True, **fields}
    with http.stream("POST", "/v1/chat", json=body) as response:
        assert response.status_code == 200, response.read()
        return parse_sse(response.iter_lines())


def test_chat_streams_the_handoff_and_billing_answers_until_it_hands_back(
    tmp_path: Path, triage: tuple[str, Path], openai_server: OpenAIServer
) -> None:
    url, root = triage
    openai_server.script(
        tool_calls(Call("transfer_to_billing", {"reason": "an invoice question"})),
        tool_calls(Call("lookup_invoice", {"number": "7"})),
        text("Invoice 7 is 42 EUR, paid."),
    )
    with client(url, ALICE) as alice, client(url, BOB) as bob:
        events = chat_events(alice, "Is invoice 7 paid?")
        names = [name for name, _ in events]
        handoff = events[names.index("handoff")][1]
        assert handoff == {
            "from_agent": "triage",
            "to_agent": "billing",
            "reason": "an invoice question",
            "back": False,
            "tool": "transfer_to_billing",
        }
        # billing made the call after the handoff, and wrote the answer
        assert names.index("handoff") < names.index("tool_call_finished")
        final = events[-1][1]
        assert events[-1][0] == "final"
        assert final["agent"] == "triage" and final["answered_by"] == "billing"
        assert final["response"] == "Invoice 7 is 42 EUR, paid."
        assert final["handoffs"] == [handoff]
        first, second, _answer = (r.body for r in openai_server.requests)
        assert TRIAGE_SAYS in instructions(first)
        assert BILLING_SAYS in instructions(second) and TRIAGE_SAYS not in instructions(second)
        session_id = final["session_id"]

        seen = alice.get(f"/v1/sessions/{session_id}").json()
        assert seen["agent"] == "triage" and seen["answering_agent"] == "billing"
        # another key's request finds no such session
        assert bob.get(f"/v1/sessions/{session_id}").status_code == 404

    # another process sharing the store (a replica, or this one restarted) goes on with billing
    env = {"HOLODECK_HOME": str(tmp_path / "home2")}
    with deploy_process(str(root), env=env) as (_, other), client(other, ALICE) as alice:
        assert alice.get(f"/v1/sessions/{session_id}").json()["answering_agent"] == "billing"
        openai_server.script(text("Invoice 8 is open."))
        answer = alice.post("/v1/chat", json={"message": "And 8?", "session_id": session_id})
        assert answer.status_code == 200, answer.text
        said = answer.json()
        assert said["answered_by"] == "billing" and said["handoffs"] == []
        assert BILLING_SAYS in instructions(openai_server.requests[-1].body)

        openai_server.script(
            tool_calls(Call("transfer_back_to_triage", {"reason": "not about billing"})),
            text("We open at 9."),
        )
        events = chat_events(alice, "When do you open?", session_id=session_id)
        (back,) = [data for name, data in events if name == "handoff"]
        assert back == {
            "from_agent": "billing",
            "to_agent": "triage",
            "reason": "not about billing",
            "back": True,
            "tool": "transfer_back_to_triage",
        }
        assert events[-1][1]["answered_by"] == "triage"
        assert TRIAGE_SAYS in instructions(openai_server.requests[-1].body)
        seen = alice.get(f"/v1/sessions/{session_id}").json()
        assert seen["answering_agent"] == "triage"

        # a JSON answer lists the turn's handoffs as the stream does
        openai_server.script(tool_calls(Call("transfer_to_billing", {})), text("Billing here."))
        answer = alice.post("/v1/chat", json={"message": "Invoice 9?", "session_id": session_id})
        assert answer.json()["handoffs"] == [
            {
                "from_agent": "triage",
                "to_agent": "billing",
                "reason": None,
                "back": False,
                "tool": "transfer_to_billing",
            }
        ]


def test_ag_ui_a2a_and_responses_show_or_follow_the_handoff(
    triage: tuple[str, Path], openai_server: OpenAIServer
) -> None:
    url, _ = triage
    # AG-UI, through the official client: a CUSTOM event, and billing's message named
    openai_server.script(
        tool_calls(Call("transfer_to_billing", {"reason": "invoices"})),
        text("Billing here: invoice 7 is paid."),
    )
    (run,) = run_client(url + "/awp", "thread-agui", "Is invoice 7 paid?", key=ALICE)
    assert "error" not in run, run
    custom = [e for e in run["events"] if e["type"] == "CUSTOM"]
    assert [(e["name"], e["value"]) for e in custom] == [
        (
            "holodeck.handoff",
            {
                "from_agent": "triage",
                "to_agent": "billing",
                "reason": "invoices",
                "back": False,
                "tool": "transfer_to_billing",
            },
        )
    ]
    (reply,) = [m for m in run["messages"] if m["role"] == "assistant" and m.get("content")]
    assert reply["name"] == "billing" and reply["content"] == "Billing here: invoice 7 is paid."
    assert run["state"]["answered_by"] == "billing"

    # A2A, streamed, through the a2a-sdk client: the handoff is a status update, and the
    # answer's message and artifact name billing
    openai_server.script(
        tool_calls(Call("transfer_to_billing", {"reason": "a refund"})),
        text("Refunds take 5 days."),
    )
    events = asyncio.run(a2a_stream(url, "How long does a refund take?"))
    updates = [e.status_update for e in events if e.HasField("status_update")]
    said = [MessageToDict(u.metadata).get("holodeck", {}) for u in updates]
    handed = [s for s in said if s.get("event") == "handoff"]
    assert handed == [
        {
            "event": "handoff",
            "from_agent": "triage",
            "to_agent": "billing",
            "reason": "a refund",
            "back": False,
            "tool": "transfer_to_billing",
        }
    ]
    assert said[-1]["answered_by"] == "billing"
    author = MessageToDict(updates[-1].status.message.metadata)
    assert author == {"holodeck": {"agent": "billing"}}

    # /v1/responses: the stored conversation goes on with billing, nothing new on the wire
    openai_server.script(
        tool_calls(Call("transfer_to_billing", {})),
        text("Invoice 9 is open."),
        text("It is due on Friday."),
    )
    with client(url, ALICE) as alice:
        first = alice.post("/v1/responses", json={"model": "triage", "input": "Invoice 9?"})
        assert first.status_code == 200, first.text
        later = alice.post(
            "/v1/responses",
            json={
                "model": "triage",
                "input": "When is it due?",
                "previous_response_id": first.json()["id"],
            },
        )
        assert later.status_code == 200, later.text
    assert BILLING_SAYS in instructions(openai_server.requests[-1].body)


async def a2a_stream(url: str, question: str) -> list[Any]:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message, Part, Role, SendMessageRequest

    headers = {"Authorization": f"Bearer {ALICE}"}
    async with httpx.AsyncClient(timeout=60, headers=headers) as http:
        config = ClientConfig(streaming=True, httpx_client=http)
        a2a = await ClientFactory(config).create_from_url(url + "/a2a/triage")
        sent = Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text=question)])
        return [e async for e in a2a.send_message(SendMessageRequest(message=sent))]
