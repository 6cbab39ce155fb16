"""Run an agent from Python and print what happens, event by event."""

from __future__ import annotations

import asyncio
import sys

from holodeck import (
    Agent,
    FinalMessage,
    RunOptions,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    load_agent,
)


async def main(path: str, question: str) -> None:
    agent = Agent(load_agent(path), RunOptions(model="test"))  # offline: no key needed
    async with agent, agent.session() as session:
        async for event in session.run(question):
            show(event)


def show(event: object) -> None:
    if isinstance(event, ToolCallStarted):
        print(f"-> {event.name}({event.args})")
    elif isinstance(event, ToolCallFinished):
        status = "ok" if event.ok else f"failed: {event.error}"
        print(f"<- {event.name} {status} in {event.duration_ms:.0f} ms")
    elif isinstance(event, TextDelta):
        print(event.text, end="", flush=True)
    elif isinstance(event, FinalMessage):
        print(f"\n[{event.usage.total_tokens} tokens, {len(event.tool_calls)} tool calls]")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
