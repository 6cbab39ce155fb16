"""Handoffs (`handoffs:`): a triage agent transfers the conversation to a billing agent,
which answers that message and the later ones with its own instructions, tools and model
until it hands back. Offline (`model="test"`, told by `/call` lines and the run's
`OfflineScript`) and against the scripted OpenAI-compatible server (the real OpenAI SDK
over real HTTP)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
from holodeck import RunOptions, load_agent
from holodeck.errors import ModelOutputError
from holodeck.runtime import (
    Agent,
    Event,
    FinalMessage,
    GuardrailTriggered,
    HandedOff,
    Session,
    ToolCallFinished,
)
from scripted_servers import Call, OpenAIServer, text, tool_calls
from yaml_dump import dump

openai_server = scripted_servers.openai_server

BILLING_TOOL = '''
def lookup_invoice(number: str) -> str:
    """Look up an invoice by its number."""
    return f"invoice {number}: 42 EUR, paid on 3 May"
'''


def agents(root: Path, model: dict[str, Any] | None = None, **billing: Any) -> Path:
    """triage/agent.yaml handing over to billing/agent.yaml (which has `lookup_invoice`)."""
    model = model or {"provider": "test"}
    (root / "billing").mkdir(parents=True)
    (root / "billing" / "tools.py").write_text(BILLING_TOOL, encoding="utf-8")
    billing_spec = {
        "name": "billing",
        "description": "Invoices, refunds, payments.",
        "model": model,
        "instructions": {"inline": "You are the billing desk."},
        "tools": [
            {
                "name": "lookup_invoice",
                "type": "function",
                "file": "tools.py",
                "function": "lookup_invoice",
                "description": "Look up an invoice by its number.",
            }
        ],
        **billing,
    }
    (root / "billing" / "agent.yaml").write_text(dump(billing_spec), encoding="utf-8")
    triage = {
        "name": "triage",
        "model": model,
        "instructions": {"inline": "You route customers to the right desk."},
        "handoffs": [{"name": "billing", "path": "billing/agent.yaml"}],
    }
    (root / "agent.yaml").write_text(dump(triage), encoding="utf-8")
    return root


async def turn(session: Session, prompt: str) -> tuple[list[Event], FinalMessage]:
    events = [event async for event in session.run(prompt)]
    final = events[-1]
    assert isinstance(final, FinalMessage)
    return events, final


def handed(events: list[Event]) -> list[tuple[str, str, bool]]:
    return [(e.from_agent, e.to_agent, e.back) for e in events if isinstance(e, HandedOff)]


def test_triage_hands_over_to_billing_which_answers_until_it_hands_back(tmp_path: Path) -> None:
    root = agents(tmp_path)

    async def main() -> None:
        async with Agent(load_agent(root), RunOptions(model="test")) as agent:
            session = agent.session()
            assert session.answering_agent == "triage"
            events, final = await turn(
                session, "My invoice 7 is wrong /call transfer_to_billing /call lookup_invoice"
            )
            assert handed(events) == [("triage", "billing", False)]
            assert [e.tool for e in events if isinstance(e, HandedOff)] == ["transfer_to_billing"]
            # billing made the call, in the same turn, and answered from it
            assert [c.name for c in final.tool_calls] == ["lookup_invoice"]
            assert final.agent == "billing"
            assert "42 EUR" in final.text and "Transferred" not in final.text
            assert session.answering_agent == "billing"

            events, final = await turn(session, "And invoice 8? /call lookup_invoice")
            assert handed(events) == []  # later messages go to billing
            assert final.agent == "billing" and final.tool_calls[0].ok

            events, final = await turn(session, "Thanks! /call transfer_back_to_triage")
            assert handed(events) == [("billing", "triage", True)]
            assert [e.tool for e in events if isinstance(e, HandedOff)] == [
                "transfer_back_to_triage"
            ]
            assert final.agent == "triage" and session.answering_agent == "triage"
            assert final.text.startswith("Test answer to: Thanks!")

            _, final = await turn(session, "Hello again")
            assert final.agent == "triage"

    asyncio.run(main())


def test_a_cases_expected_calls_go_to_the_agent_that_has_the_tool(tmp_path: Path) -> None:
    root = agents(tmp_path)

    async def main() -> list[Event]:
        async with Agent(load_agent(root), RunOptions(model="test")) as agent:
            session = agent.session()
            with agent.options.offline.expecting(["transfer_to_billing", "lookup_invoice"]):
                return [event async for event in session.run("Where is my invoice 7?")]

    events = asyncio.run(main())
    assert handed(events) == [("triage", "billing", False)]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [e.name for e in finished] == ["lookup_invoice"]
    final = events[-1]
    assert isinstance(final, FinalMessage) and final.agent == "billing"


def test_agents_handing_a_message_back_and_forth_end_the_turn_with_an_error(
    tmp_path: Path,
) -> None:
    root = agents(tmp_path)

    async def main() -> tuple[list[Event], Session]:
        events: list[Event] = []
        async with Agent(load_agent(root), RunOptions(model="test")) as agent:
            session = agent.session()
            with pytest.raises(ModelOutputError, match="handed the conversation over more than"):
                async for event in session.run(
                    "Ping pong /call transfer_to_billing /call transfer_back_to_triage"
                ):
                    events.append(event)
            return events, session

    events, session = asyncio.run(main())
    assert len(handed(events)) == 5
    # the failed turn leaves the session as it was: triage answers, nothing kept
    assert session.answering_agent == "triage" and session.messages == []


def test_the_saved_session_restores_who_answers(tmp_path: Path) -> None:
    root = agents(tmp_path)

    async def main() -> tuple[str, FinalMessage, bytes]:
        async with Agent(load_agent(root), RunOptions(model="test")) as agent:
            session = agent.session()
            await session.answer("Invoice help /call transfer_to_billing")
            saved = session.to_json()
        # another process: a new agent, the session read back
        async with Agent(load_agent(root), RunOptions(model="test")) as agent:
            restored = Session.from_json(agent, saved)
            who = restored.answering_agent
            final = await restored.answer("Invoice 9? /call lookup_invoice")
            return who, final, restored.to_json()

    who, final, again = asyncio.run(main())
    assert who == "billing"
    assert final.agent == "billing" and [c.name for c in final.tool_calls] == ["lookup_invoice"]
    assert b'"handoffs": ["billing"]' in again


def test_an_approval_pause_while_handed_off_resumes_with_billing(tmp_path: Path) -> None:
    root = agents(tmp_path, approval={"require": ["lookup_invoice"]})

    async def main() -> tuple[FinalMessage, FinalMessage, str]:
        async with Agent(load_agent(root), RunOptions(model="test")) as agent:
            session = agent.session()
            paused = await session.answer(
                "Invoice 7 /call transfer_to_billing /call lookup_invoice"
            )
            # the pause travels with the session, who answers too
            restored = Session.from_json(agent, session.to_json())
            for call in paused.pending:
                restored.decide(call.call_id, True)
            events = [event async for event in restored.resume()]
            final = events[-1]
            assert isinstance(final, FinalMessage)
            return paused, final, restored.answering_agent

    paused, final, who = asyncio.run(main())
    assert [c.name for c in paused.pending] == ["lookup_invoice"]
    assert paused.agent == "billing"
    assert final.agent == "billing" and who == "billing"
    assert "42 EUR" in final.text


def test_billings_instructions_tools_and_model_reach_the_provider_after_the_handoff(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    model = {"provider": "openai", "name": "gpt-triage", "endpoint": openai_server.url}
    root = agents(tmp_path, model)
    billing = root / "billing" / "agent.yaml"
    billing.write_text(
        billing.read_text(encoding="utf-8").replace("gpt-triage", "gpt-billing"), encoding="utf-8"
    )
    openai_server.script(
        tool_calls(Call("transfer_to_billing", {"reason": "an invoice question"})),
        tool_calls(Call("lookup_invoice", {"number": "7"})),
        text("Invoice 7 is 42 EUR, paid."),
        text("Invoice 8 is paid too."),
        tool_calls(Call("transfer_back_to_triage", {})),
        text("Anything else I can route?"),
    )

    async def main() -> list[tuple[list[Event], FinalMessage]]:
        options = RunOptions(env={"OPENAI_API_KEY": "sk-test"})
        async with Agent(load_agent(root), options) as agent:
            session = agent.session()
            return [
                await turn(session, prompt)
                for prompt in ("My invoice 7 is wrong", "And invoice 8?", "Thanks, that's all")
            ]

    turns = asyncio.run(main())
    assert [final.agent for _, final in turns] == ["billing", "billing", "triage"]
    assert [handed(events) for events, _ in turns] == [
        [("triage", "billing", False)],
        [],
        [("billing", "triage", True)],
    ]
    reasons = [e.reason for e in turns[0][0] if isinstance(e, HandedOff)]
    assert reasons == ["an invoice question"]
    assert turns[0][1].text == "Invoice 7 is 42 EUR, paid."

    bodies = openai_server.bodies()
    assert [b["model"] for b in bodies] == ["gpt-triage"] + ["gpt-billing"] * 4 + ["gpt-triage"]

    def system(body: dict[str, Any]) -> str:
        return " ".join(m["content"] for m in body["messages"] if m["role"] == "system")

    def tools(body: dict[str, Any]) -> set[str]:
        return {t["function"]["name"] for t in body.get("tools", [])}

    assert "route customers" in system(bodies[0]) and tools(bodies[0]) == {"transfer_to_billing"}
    assert "billing desk" in system(bodies[1]) and "route" not in system(bodies[1])
    assert tools(bodies[1]) == {"lookup_invoice", "transfer_back_to_triage"}
    # billing sees the whole conversation: the question, the transfer and its result
    roles = [m["role"] for m in bodies[1]["messages"] if m["role"] != "system"]
    assert roles == ["user", "assistant", "tool"]
    transferred = bodies[1]["messages"][-1]["content"]
    assert "Transferred to billing" in transferred
    assert "route customers" in system(bodies[5]) and tools(bodies[5]) == {"transfer_to_billing"}


def test_the_session_agents_guardrails_hold_while_billing_answers(tmp_path: Path) -> None:
    """Billing has no guardrails of its own: the front door's still check every message
    and every answer after the handoff."""
    root = agents(tmp_path)
    triage = (root / "agent.yaml").read_text(encoding="utf-8")
    guardrails = {
        "guardrails": {
            "input": [{"block_keywords": ["wire the money"]}],
            "output": [{"pii": ["email"], "action": "redact"}],
        }
    }
    (root / "agent.yaml").write_text(triage + dump(guardrails), encoding="utf-8")

    async def main() -> None:
        async with Agent(load_agent(root), RunOptions(model="test")) as agent:
            session = agent.session()
            await turn(session, "Invoice 7 please /call transfer_to_billing")
            assert session.answering_agent == "billing"

            events, final = await turn(session, "Now wire the money to me")
            hits = [(e.side, e.action) for e in events if isinstance(e, GuardrailTriggered)]
            assert hits == [("input", "block")]
            assert "wire the money" not in final.text

            events, final = await turn(session, "Write to ann@example.com")
            assert final.agent == "billing"
            assert "ann@example.com" not in final.text
            assert ("output", "redact") in [
                (e.side, e.action) for e in events if isinstance(e, GuardrailTriggered)
            ]

    asyncio.run(main())
