"""`Run` and an `Agent`'s lifecycle: one event loop from first use until closed, opened
once at a time, and everything started for them (Node.js and the threads talking to it,
synchronous tools' threads, telemetry exporters) gone when they close, whatever the
block ended with."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import threading
from pathlib import Path

import httpx
import pytest

from conftest import Write
from holodeck import Agent, LifecycleError, Run, RunOptions, load_agent
from server_harness import free_port, until

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "weather"

NODE_IMAGE = {
    "config.yaml": "spec_version: 1\nname: trader\nllm:\n  model: openai/gpt-4o\n",
    "tools/typescript/pid.ts": """
/** The id of the Node.js process answering. */
export function pid(): number {
  return process.pid;
}
""",
}

LOOKUP_AGENT = """
name: finder
model: {provider: openai, name: gpt-4o-mini}
instructions: {inline: You find things.}
tools:
  - {type: function, name: lookup, file: tools.py, function: lookup}
"""
# Synchronous: the first call says it started, then waits for a file named `release`
# (a thread cannot be stopped: only its own code can end it). Later calls answer at once.
BLOCKING_LOOKUP = '''
import time
from pathlib import Path

CALLS = []

def lookup(query: str) -> str:
    """Look something up.

    Args:
        query: What to look up.
    """
    CALLS.append(query)
    here = Path(__file__).parent
    if len(CALLS) == 1:
        (here / "started").touch()
        while not (here / "release").exists():
            time.sleep(0.01)
    return "found " + query
'''

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")


def weather() -> Agent:
    return Agent(load_agent(EXAMPLE), RunOptions(model="test"))


def node_pids(agent: Agent) -> list[int]:
    found: list[int] = []
    for toolset in agent._toolsets:
        toolset.apply(
            lambda t: found.append(t.process_id) if getattr(t, "process_id", None) else None
        )
    return found


def threads_named(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


def gone(pid: int) -> bool:
    """Process `pid` has ended (a zombie not yet reaped counts as ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


# --- one event loop, opened once ---------------------------------------------------------


def test_an_agent_used_on_a_second_event_loop_before_it_is_closed_is_refused() -> None:
    agent = weather()
    asyncio.run(agent.answer("Weather in Oslo? /call *"))
    with pytest.raises(LifecycleError, match="another event loop") as refused:
        asyncio.run(agent.answer("And in Paris? /call *"))
    assert "new one" in str(refused.value.hint)
    asyncio.run(agent.aclose())  # closed: for good
    with pytest.raises(LifecycleError, match="agent weather is closed"):
        asyncio.run(agent.answer("And in Rome? /call *"))


def test_an_agent_opened_while_open_is_refused_and_not_reopened_once_closed() -> None:
    agent = weather()

    async def twice() -> None:
        async with agent:
            with pytest.raises(LifecycleError, match="already open"):
                async with agent:
                    pass
            await agent.answer("Weather in Oslo? /call *")  # the first opening is untouched

    asyncio.run(twice())
    with pytest.raises(LifecycleError, match="agent weather is closed") as refused:
        asyncio.run(twice())  # closed is final, as an httpx client's is
    assert "Agent(spec, options)" in str(refused.value.hint)


def test_a_run_opened_while_open_or_holding_an_open_agent_is_refused() -> None:
    agent = weather()

    async def main() -> None:
        run = Run(agent)
        async with run:
            with pytest.raises(LifecycleError, match="Run is already open"):
                async with run:
                    pass
            with pytest.raises(LifecycleError, match=r"already open \(in a Run\)"):
                async with agent:
                    pass
        with pytest.raises(LifecycleError, match="Run is closed"):
            async with run:  # closed is final
                pass
        other = weather()
        async with other:
            with pytest.raises(LifecycleError, match="already open"):
                async with Run(other):
                    pass

    asyncio.run(main())


def test_an_agent_of_an_open_run_used_from_another_event_loop_is_refused() -> None:
    agent = weather()

    async def main() -> None:
        async with Run(agent):
            await agent.answer("Weather in Oslo? /call *")
            with pytest.raises(LifecycleError, match="another event loop"):
                await asyncio.to_thread(asyncio.run, agent.answer("From elsewhere? /call *"))
            assert (await agent.answer("Still here? /call *")).tool_calls  # unharmed

    asyncio.run(main())


# --- what a run started ends with it ------------------------------------------------------


@needs_node
@pytest.mark.parametrize("ending", ["done", "error", "cancelled"])
def test_node_and_its_threads_are_gone_when_the_run_ends(write: Write, ending: str) -> None:
    agent = Agent(load_agent(write(NODE_IMAGE)), RunOptions(model="test"))
    pids: list[int] = []

    async def use() -> None:
        async with Run(agent):
            final = await agent.answer("Which process? /call *")
            pids.extend(node_pids(agent))
            assert [call.result for call in final.tool_calls] == pids  # it answered
            if ending == "error":
                raise RuntimeError("the caller failed")
            if ending == "cancelled":
                await asyncio.Event().wait()

    async def main() -> None:
        if ending == "cancelled":
            task = asyncio.create_task(use())
            await asyncio.to_thread(until, lambda: pids, 60.0, "Node.js to answer")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        elif ending == "error":
            with pytest.raises(RuntimeError, match="the caller failed"):
                await use()
        else:
            await use()

    asyncio.run(main())
    (pid,) = pids
    assert gone(pid)
    assert threads_named(f"holodeck-node-{pid}-") == []  # joined, not left behind
    assert node_pids(agent) == []


@needs_node
def test_a_new_run_of_a_new_agent_starts_node_afresh(write: Write) -> None:
    root = write(NODE_IMAGE)

    async def once() -> int:
        agent = Agent(load_agent(root), RunOptions(model="test"))
        async with Run(agent):
            final = await agent.answer("Which process? /call *")
            (pid,) = node_pids(agent)
            assert final.tool_calls[0].result == pid
            return pid

    first = asyncio.run(once())
    second = asyncio.run(once())  # another event loop, another agent
    assert second != first and gone(first) and gone(second)


def test_a_sync_tool_thread_ends_with_the_run_or_is_named_when_it_cannot(
    write: Write, caplog: pytest.LogCaptureFixture
) -> None:
    root = write({"agent.yaml": LOOKUP_AGENT, "tools.py": BLOCKING_LOOKUP})
    agent = Agent(load_agent(root), RunOptions(model="test"))

    async def main() -> None:
        async with Run(agent):
            turn = asyncio.create_task(agent.answer("wait /call *"))
            await asyncio.to_thread(until, (root / "started").exists, 60.0, "the tool")
            turn.cancel()  # the thread cannot be stopped: it is abandoned
            with pytest.raises(asyncio.CancelledError):
                await turn
            assert (await agent.answer("a /call *")).tool_calls[0].result == "found a"

    with caplog.at_level(logging.WARNING, logger="holodeck.tools"):
        asyncio.run(main())
    # the answered call's thread was joined; the abandoned one is named, still running
    assert [t.name for t in threads_named("tool-lookup")] == ["tool-lookup"]
    assert "finder: the tool call in thread tool-lookup is still running" in caplog.text
    (root / "release").touch()
    until(lambda: not threads_named("tool-lookup"), 20.0, "the released call to end")


def test_telemetry_exporters_stop_when_the_run_ends(tmp_path: Path) -> None:
    port = free_port()
    root = tmp_path / "agent"
    root.mkdir()
    (root / "agent.yaml").write_text(
        "name: observed\nmodel: {provider: openai, name: gpt-4o-mini}\n"
        "instructions: {inline: Help.}\n"
        "observability:\n  enabled: true\n"
        f"  exporters: {{prometheus: {{enabled: true, port: {port}}}}}\n"
    )
    agent = Agent(load_agent(root), RunOptions(model="test"))

    async def main() -> None:
        async with Run(agent):
            await agent.answer("Hello /call *")
            assert threads_named("holodeck-prometheus")  # serving while the run is open
            async with httpx.AsyncClient() as client:
                scraped = await client.get(f"http://127.0.0.1:{port}/metrics")
            assert scraped.status_code == 200

    asyncio.run(main())
    assert threads_named("holodeck-prometheus") == []
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/metrics")


def test_the_cassette_keeps_an_interrupted_turns_exchanges_when_the_run_ends(
    write: Write,
) -> None:
    from holodeck.llm.cassette import Cassette

    root = write({"agent.yaml": LOOKUP_AGENT, "tools.py": BLOCKING_LOOKUP})
    path = root / "cassette.yaml"
    agent = Agent(load_agent(root), RunOptions(model="test", cassette=Cassette.record(path)))

    async def main() -> None:
        async with Run(agent):
            turn = asyncio.create_task(agent.answer("wait /call *"))
            await asyncio.to_thread(until, (root / "started").exists, 60.0, "the tool")
            turn.cancel()  # the turn never finishes: it saves nothing itself
            with pytest.raises(asyncio.CancelledError):
                await turn
            assert not path.exists()
            raise RuntimeError("the caller failed")

    try:
        with pytest.raises(RuntimeError, match="the caller failed"):
            asyncio.run(main())
        # the model's request that called the tool is on disk
        assert "lookup" in path.read_text()
    finally:
        (root / "release").touch()
