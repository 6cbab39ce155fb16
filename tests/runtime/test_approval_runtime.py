"""Which calls wait for approval, through the runtime's API (`Session.run`, `decide`,
`resume`): an MCP server's `approval: required` covers each of its tools, a pattern may
name one as `server.tool`, an image takes `approval:` in config.yaml, and a paused turn
travels with the session's JSON. The offline `test` model calls what `/call` names."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from holodeck import RunOptions, load_agent
from holodeck.errors import ApprovalPending
from holodeck.runtime import Agent, ApprovalRequired, FinalMessage, Session, ToolCallFinished
from yaml_dump import dump

DEMO = Path(__file__).parents[1] / "mcp_servers" / "demo.py"


def mcp_agent(root: Path, server: dict[str, Any], **extra: Any) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    entry = {"type": "mcp", "name": "demo", "command": sys.executable, "args": [str(DEMO)]}
    spec = {
        "name": "helper",
        "model": {"provider": "test"},
        "instructions": {"inline": "You help."},
        "tools": [entry | server],
        **extra,
    }
    (root / "agent.yaml").write_text(dump(spec), encoding="utf-8")
    return root


async def paused_calls(root: Path, *prompts: str) -> list[list[str]]:
    """For each prompt (a turn of its own), the tools its turn paused on; each pause is
    approved and the turn resumed."""
    out: list[list[str]] = []
    async with Agent(load_agent(root), RunOptions(model="test")) as agent:
        for prompt in prompts:
            session = agent.session()
            final = await session.answer(prompt)
            out.append([c.name for c in final.pending])
            for call in final.pending:
                session.decide(call.call_id, True)
            if final.pending:
                rest = await resumed(session)
                assert rest.tool_calls and rest.tool_calls[0].ok
    return out


async def resumed(session: Session) -> FinalMessage:
    """The rest of a paused turn whose calls are decided: its final message."""
    events = [event async for event in session.resume()]
    assert isinstance(events[-1], FinalMessage)
    return events[-1]


def test_an_mcp_servers_approval_covers_each_of_its_tools(tmp_path: Path) -> None:
    root = mcp_agent(tmp_path / "all", {"approval": "required"})

    paused = asyncio.run(paused_calls(root, 'x /call demo_echo {"text": "hi"}', "x /call demo_add"))

    assert paused == [["demo_echo"], ["demo_add"]]


def test_a_pattern_names_one_mcp_tool_as_server_dot_tool(tmp_path: Path) -> None:
    root = mcp_agent(tmp_path / "one", {}, approval={"require": ["demo.add"]})

    paused = asyncio.run(paused_calls(root, 'x /call demo_echo {"text": "hi"}', "x /call demo_add"))

    assert paused == [[], ["demo_add"]]


def test_a_paused_turn_travels_with_the_session_and_blocks_new_messages(
    tmp_path: Path,
) -> None:
    root = tmp_path / "image"
    (root / "tools" / "python").mkdir(parents=True)
    (root / "config.yaml").write_text(
        "spec_version: 1\nname: shop\nllm: {model: test/test}\napproval:\n  require: [remove]\n",
        encoding="utf-8",
    )
    (root / "AGENTS.md").write_text("You manage orders.\n", encoding="utf-8")
    (root / "tools" / "python" / "remove.py").write_text(
        'def remove(order_id: str) -> str:\n    """Remove an order."""\n'
        '    return f"removed {order_id}"\n',
        encoding="utf-8",
    )

    async def scenario() -> tuple[Any, ...]:
        async with Agent(load_agent(root), RunOptions(model="test")) as agent:
            first = agent.session("s1")
            events = [e async for e in first.run("remove order 5 /call remove")]
            saved = first.to_json()
            again = Session.from_json(agent, saved)
            try:
                await again.answer("another question")
                refused = None
            except ApprovalPending as exc:
                refused = exc
            (call,) = again.pending.calls if again.pending else ()
            assert again.decide(call.call_id, False, "not on Fridays")
            rest = [e async for e in again.resume()]
            return events, refused, rest, again

    events, refused, rest, session = asyncio.run(scenario())

    asked = [e for e in events if isinstance(e, ApprovalRequired)]
    assert [(e.name, e.args) for e in asked] == [("remove", {"order_id": "5"})]
    assert isinstance(refused, ApprovalPending) and "remove" in str(refused)
    (denied,) = [e for e in rest if isinstance(e, ToolCallFinished)]
    assert denied.error == "denied: not on Fridays"
    final = rest[-1]
    assert isinstance(final, FinalMessage) and final.pending == ()
    assert final.text == "remove was not run: not on Fridays"
    assert session.pending is None and len(session.messages) == 4  # the whole turn kept
