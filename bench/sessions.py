"""What a conversation costs: memory per idle session, the time to open one, and a turn
of many sessions sharing one agent's MCP server.

Run: .venv/bin/python bench/sessions.py [sessions]
Targets: under 50 KiB per idle session (one finished turn kept), under 1 ms to open one.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, Session
from holodeck.runtime.toolsets import McpToolset

DEMO = Path(__file__).resolve().parent.parent / "tests" / "mcp_servers" / "demo.py"
AGENT_YAML = f"""
name: bench
model: {{provider: openai, name: gpt-4o}}
instructions: {{inline: You help.}}
tools:
  - {{type: mcp, name: demo, command: {sys.executable}, args: [{DEMO}], tools: [echo]}}
"""


def build() -> Agent:
    root = Path(tempfile.mkdtemp())
    (root / "agent.yaml").write_text(AGENT_YAML, encoding="utf-8")
    return Agent(load_agent(root), RunOptions(model="test"))


async def open_cost(agent: Agent, count: int) -> float:
    """Microseconds to open (and close) one session."""
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(count):
            async with agent.session():
                pass
        samples.append((time.perf_counter() - start) / count * 1e6)
    return statistics.median(samples)


async def idle_memory(agent: Agent, count: int) -> tuple[float, float]:
    """KiB per idle session: empty, and after one turn with a tool call."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    sessions = [Session(agent) for _ in range(count)]
    empty = tracemalloc.take_snapshot()
    for session in sessions:
        with agent.options.offline.expecting(["demo_echo"]):
            await session.answer("hello there")
    gc.collect()
    talked = tracemalloc.take_snapshot()
    tracemalloc.stop()

    def kib(after: tracemalloc.Snapshot, base: tracemalloc.Snapshot) -> float:
        grown = sum(stat.size_diff for stat in after.compare_to(base, "filename"))
        return grown / count / 1024

    return kib(empty, before), kib(talked, before)


async def shared_turns(agent: Agent, count: int) -> float:
    """Milliseconds per turn for `count` sessions, 50 at a time, one MCP server."""
    gate = asyncio.Semaphore(50)

    async def talk(session: Session) -> None:
        async with gate:
            with session.agent.options.offline.expecting(["demo_echo"]):
                await session.answer("hi")

    sessions = [Session(agent) for _ in range(count)]
    start = time.perf_counter()
    await asyncio.gather(*(talk(s) for s in sessions))
    return (time.perf_counter() - start) / count * 1000


async def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    async with build() as agent:
        with agent.options.offline.expecting(["demo_echo"]):
            await agent.session().answer("warm up")
        opened = await open_cost(agent, count)
        empty, talked = await idle_memory(agent, min(count, 500))
        per_turn = await shared_turns(agent, count)
        starts = sum(t.starts() for t in _mcp(agent))
    print(f"open a session:             {opened:8.1f} µs   (target < 1000 µs)")
    print(f"idle session, no turn yet:  {empty:8.2f} KiB")
    print(f"idle session after a turn:  {talked:8.2f} KiB  (target < 50 KiB)")
    print(f"{count} sessions, one turn each through one MCP server: {per_turn:.2f} ms a turn")
    print(f"MCP server processes started: {starts}")


def _mcp(agent: Agent) -> list[McpToolset]:
    found: list[McpToolset] = []
    for toolset in agent._toolsets:
        toolset.apply(lambda t: found.append(t) if isinstance(t, McpToolset) else None)
    return found


if __name__ == "__main__":
    asyncio.run(main())
