"""Sessions: conversations of one agent that share its servers, keep their own history,
save to JSON and live in stores (memory, SQLite) whose lock keeps turns in order."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import ModelRequest, UserPromptPart

from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, Session, SessionError, ToolCallFinished, stored_session
from holodeck.sessions import (
    MemorySessionStore,
    SessionBusy,
    SessionStore,
    SessionStoreError,
    SqliteSessionStore,
)
from yaml_dump import dump

pytestmark = pytest.mark.anyio

DEMO = Path(__file__).resolve().parents[1] / "mcp_servers" / "demo.py"
REPO = Path(__file__).resolve().parents[2]


def demo_server(name: str, pids: Path, **fields: Any) -> dict[str, Any]:
    return {
        "type": "mcp",
        "name": name,
        "command": sys.executable,
        "args": [str(DEMO)],
        "env": {"DEMO_PID_FILE": str(pids)},
        "tools": ["echo", "whoami"],
    } | fields


def agent_with(write: Write, *tools: dict[str, Any], **extra: Any) -> Agent:
    root = write(
        {
            "agent.yaml": dump(
                {
                    "name": "helper",
                    "model": {"provider": "openai", "name": "gpt-4o"},
                    "instructions": {"inline": "You help."},
                    "tools": list(tools),
                    **extra,
                }
            )
        }
    )
    return Agent(load_agent(root), RunOptions(model="test"))


def prompts(session: Session) -> list[str]:
    return [
        str(part.content)
        for message in session.messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]


def starts(pids: Path) -> int:
    return len(pids.read_text().split()) if pids.exists() else 0


# --- sessions of one agent ---------------------------------------------------------------


async def test_a_thousand_sessions_share_one_server_and_keep_their_own_history(
    write: Write, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    async with agent_with(write, demo_server("demo", pids)) as agent:
        sessions = [agent.session(f"s{i}") for i in range(1000)]
        gate = asyncio.Semaphore(50)

        async def talk(session: Session) -> None:
            async with gate:
                with agent.options.offline.expecting(["demo_echo"]):
                    final = await session.answer(f"hello from {session.id}")
            assert final.tool_calls[0].ok

        await asyncio.gather(*(talk(s) for s in sessions))
        assert starts(pids) == 1  # one server process for every session
        for session in sessions:
            assert prompts(session) == [f"hello from {session.id}"]
        await asyncio.gather(*(s.aclose() for s in sessions))


async def test_session_scoped_servers_are_one_per_session_and_stop_with_it(
    write: Write, tmp_path: Path
) -> None:
    shared, own = tmp_path / "shared", tmp_path / "own"
    agent = agent_with(
        write, demo_server("shared", shared), demo_server("browser", own, scope="session")
    )
    async with agent:
        first, second = agent.session(), agent.session()
        assert starts(own) == 0  # opening a session starts nothing

        async def whoami(session: Session) -> dict[str, int]:
            with session.agent.options.offline.expecting(["shared_whoami", "browser_whoami"]):
                final = await session.answer("who")
            return {c.name: c.result["pid"] for c in final.tool_calls}

        one, two = await whoami(first), await whoami(second)
        assert one["shared_whoami"] == two["shared_whoami"]
        assert one["browser_whoami"] != two["browser_whoami"]
        assert await whoami(first) == one  # a session keeps its own server across turns
        await first.aclose()
        assert not Path(f"/proc/{one['browser_whoami']}").exists()
        assert Path(f"/proc/{two['browser_whoami']}").exists()
        await second.aclose()
    assert (starts(shared), starts(own)) == (1, 2)


async def test_an_agent_run_outside_a_session_stops_its_session_servers(
    write: Write, tmp_path: Path
) -> None:
    own = tmp_path / "own"
    agent = agent_with(write, demo_server("browser", own, scope="session"))
    with agent.options.offline.expecting(["browser_whoami"]):
        final = await agent.answer("who")
    assert not Path(f"/proc/{final.tool_calls[0].result['pid']}").exists()


# --- saving a session --------------------------------------------------------------------


async def test_a_session_saved_to_json_continues_where_it_was(write: Write) -> None:
    agent = agent_with(write)
    session = agent.session("talk-1")
    await session.answer("remember apples")
    data = session.to_json()
    saved = json.loads(data)
    assert (saved["format"], saved["version"], saved["id"]) == ("holodeck-session", 1, "talk-1")
    assert saved["spend"]["requests"] == session.spend.usage.requests == 1
    again = Session.from_json(agent, data)
    assert again.id == "talk-1" and again.messages == session.messages
    await again.answer("and pears")
    assert prompts(again) == ["remember apples", "and pears"]
    assert again.spend.usage.requests == 2


async def test_an_earlier_chat_file_of_bare_messages_is_read(write: Write) -> None:
    agent = agent_with(write)
    session = agent.session()
    await session.answer("hi")
    bare = json.dumps(json.loads(session.to_json())["messages"])
    assert prompts(Session.from_json(agent, bare)) == ["hi"]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("{oops", "not JSON"),
        ('{"format": "other"}', "not a HoloDeck session"),
        ('{"format": "holodeck-session", "version": 9}', "version 9 is not supported"),
        ('{"format": "holodeck-session", "version": 1, "messages": [{"x": 1}]}', "damaged"),
    ],
)
def test_a_damaged_session_says_what_is_wrong(write: Write, data: str, says: str) -> None:
    with pytest.raises(SessionError, match=says):
        Session.from_json(agent_with(write), data)


WEATHER = Agent(load_agent(REPO / "examples" / "weather"), RunOptions(model="test"))


@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_random_bytes_are_refused_with_a_session_error(data: bytes) -> None:
    with contextlib.suppress(SessionError):  # anything else escaping fails the test
        Session.from_json(WEATHER, data)


# --- stores ------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def stores(tmp_path: Path, clock: Clock, ttl_s: float | None = None) -> list[SessionStore]:
    return [
        MemorySessionStore(ttl_s=ttl_s, clock=clock),
        SqliteSessionStore(tmp_path / "sessions.db", ttl_s=ttl_s, clock=clock),
    ]


async def test_a_sqlite_store_survives_a_restart(tmp_path: Path) -> None:
    async with SqliteSessionStore(tmp_path / "s.db") as store:
        await store.save("kept", b"data")
    async with SqliteSessionStore(tmp_path / "s.db") as store:
        assert await store.load("kept") == b"data"


async def test_concurrent_turns_of_one_session_run_in_order(write: Write, tmp_path: Path) -> None:
    agent = agent_with(write)
    for store in stores(tmp_path, Clock()):
        async with store:

            async def turn(store: SessionStore, n: int) -> None:
                async with stored_session(agent, store, "shared") as session:
                    await session.answer(f"message {n}")

            await asyncio.gather(*(turn(store, n) for n in range(8)))
            async with stored_session(agent, store, "shared") as session:
                said = prompts(session)
            # every turn saw the one before it: none lost, none interleaved
            assert sorted(said) == [f"message {n}" for n in range(8)]
            assert len(session.messages) == 16


async def test_a_lock_held_too_long_says_the_session_is_busy(tmp_path: Path) -> None:
    for store in stores(tmp_path, Clock()):
        async with store, store.lock("s"):
            with pytest.raises(SessionBusy, match="session s is busy"):
                async with store.lock("s", wait_s=0.05):
                    pass


HOLDER = """
import asyncio, sys
from pathlib import Path
from holodeck.sessions import SqliteSessionStore

async def main() -> None:
    async with SqliteSessionStore(sys.argv[1]) as store, store.lock("shared"):
        print("held", flush=True)
        sys.stdin.readline()  # until told to let go

asyncio.run(main())
"""


async def test_a_sqlite_lock_holds_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        async with SqliteSessionStore(path) as store:
            with pytest.raises(SessionBusy):
                async with store.lock("shared", wait_s=0.3):
                    pass
            holder.stdin.write("go\n")
            holder.stdin.flush()
            async with store.lock("shared", wait_s=30):  # taken once the other lets go
                assert holder.wait(timeout=30) == 0
    finally:
        holder.kill()


async def test_a_crashed_holders_lock_runs_out(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "s.db"
    crashed = SqliteSessionStore(path, clock=clock, lease_s=30)
    assert await crashed._run(lambda db: crashed._take(db, "s"))  # taken, never given back
    async with SqliteSessionStore(path, clock=clock, lease_s=30) as store:
        with pytest.raises(SessionBusy):
            async with store.lock("s", wait_s=0.05):
                pass
        clock.now += 31
        async with store.lock("s", wait_s=1):
            pass
    await crashed.aclose()


async def test_an_interrupted_stored_turn_keeps_the_conversation(write: Write) -> None:
    root = write(
        {
            "agent.yaml": dump(
                {
                    "name": "slow",
                    "model": {"provider": "test"},
                    "instructions": {"inline": "Wait."},
                    "tools": [
                        {"type": "function", "name": "wait", "file": "tools.py", "function": "wait"}
                    ],
                }
            ),
            "tools.py": "import asyncio\n\nasync def wait() -> str:\n"
            "    await asyncio.sleep(600)\n    return 'late'\n",
        }
    )
    agent = Agent(load_agent(root), RunOptions(model="test"))
    store = MemorySessionStore()
    async with stored_session(agent, store, "s") as session:
        session.messages = []  # a new conversation
    started = asyncio.Event()

    async def turn() -> None:
        async with stored_session(agent, store, "s") as session:
            async for event in session.run("go"):
                if not isinstance(event, ToolCallFinished):
                    started.set()

    task = asyncio.create_task(turn())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    saved = json.loads(await store.load("s") or b"{}")
    assert saved["messages"] == [] and saved["spend"]["cancelled"] == 1


async def test_a_sqlite_store_that_cannot_be_opened_says_where_and_why(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()  # a directory where the database file should be
    async with SqliteSessionStore(tmp_path / "taken") as store:
        with pytest.raises(SessionStoreError, match=r"session store .*taken: ") as caught:
            await store.load("s")
    assert caught.value.hint and caught.value.exit_code == 3
