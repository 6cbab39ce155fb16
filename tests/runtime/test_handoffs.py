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

from holodeck import RunOptions, load_agent
from holodeck.errors import ModelOutputError
from holodeck.runtime import Agent, Event, FinalMessage, HandedOff, Session, ToolCallFinished
from yaml_dump import dump

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
