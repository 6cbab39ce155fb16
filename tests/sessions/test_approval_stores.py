"""A paused turn lives in the session store: another store object of the same server
(another process, or the server restarted) finds it waiting, decides it and resumes it,
for SQLite, Redis and PostgreSQL alike (real servers)."""

from __future__ import annotations

from pathlib import Path

import pytest

import test_session_servers
from holodeck import RunOptions, load_agent
from holodeck.runtime import Agent, FinalMessage, ToolCallFinished, stored_session
from test_session_servers import Place
from yaml_dump import dump

pytestmark = pytest.mark.anyio
place = test_session_servers.place

TOOL = '''
def remove(order_id: str) -> str:
    """Remove an order."""
    return f"removed {order_id}"
'''


def shop(root: Path) -> Agent:
    root.mkdir(parents=True, exist_ok=True)
    tool = {"type": "function", "name": "remove", "file": "tools.py", "function": "remove"}
    spec = {
        "name": "shop",
        "model": {"provider": "test"},
        "instructions": {"inline": "You manage orders."},
        "tools": [tool | {"approval": "required"}],
    }
    (root / "agent.yaml").write_text(dump(spec), encoding="utf-8")
    (root / "tools.py").write_text(TOOL, encoding="utf-8")
    return Agent(load_agent(root), RunOptions(model="test"))


@pytest.mark.parametrize("place", ["sqlite", "redis", "postgres"], indirect=True)
async def test_a_paused_turn_is_resumed_through_another_store_object(
    place: Place, tmp_path: Path
) -> None:
    agent = shop(tmp_path / "shop")
    async with place.store() as first, stored_session(agent, first, "s1") as session:
        paused = await session.answer("remove order 5 /call remove")
    async with place.store() as second, stored_session(agent, second, "s1") as session:
        waiting = [c.name for c in session.pending.calls] if session.pending else []
        assert session.decide(paused.pending[0].call_id, True)
        rest = [event async for event in session.resume()]
    async with place.store() as third, stored_session(agent, third, "s1") as session:
        kept_pending, kept_messages = session.pending, len(session.messages)

    assert [c.name for c in paused.pending] == ["remove"] and waiting == ["remove"]
    (ran,) = [e for e in rest if isinstance(e, ToolCallFinished)]
    assert ran.result == "removed 5" and ran.error is None
    assert isinstance(rest[-1], FinalMessage) and rest[-1].text == "removed 5"
    assert kept_pending is None and kept_messages == 4
