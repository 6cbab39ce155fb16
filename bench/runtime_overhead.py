"""The runtime's own cost per turn: HoloDeck's Agent against a bare pydantic-ai Agent.

Both drive the same zero-latency scripted model (a pydantic-ai FunctionModel that streams
N calls of one async tool, then a short answer) through `run_stream_events`; whatever
HoloDeck adds — the observed toolset, middleware, the event queue, the turn task,
usage limits — is the difference.

Run: .venv/bin/python bench/runtime_overhead.py [turns] [tool calls per turn]
Targets: median turn with one tool call <= 1.5x the bare agent's, and <= 2 ms extra per
tool call.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import Tool
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, FinalMessage

INSTRUCTIONS = "You look things up."
WARMUP = 20
TOOLS_PY = '''
async def lookup(query: str) -> str:
    """Look something up.

    Args:
        query: What to look up.
    """
    return "found " + query
'''
AGENT_YAML = f"""
name: bench
model: {{provider: test}}
instructions: {{inline: {INSTRUCTIONS}}}
tools:
  - {{type: function, name: lookup, file: tools.py, function: lookup}}
"""


async def lookup(query: str) -> str:
    """Look something up.

    Args:
        query: What to look up.
    """
    return "found " + query


def scripted_model(calls: int) -> FunctionModel:
    """Streams `calls` tool calls at once, then (after the results) a short answer."""

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        last = messages[-1]
        answered = isinstance(last, ModelRequest) and any(
            isinstance(p, ToolReturnPart) for p in last.parts
        )
        if calls and not answered:
            yield {
                i: DeltaToolCall("lookup", json.dumps({"query": f"q{i}"}), tool_call_id=f"c{i}")
                for i in range(calls)
            }
            return
        for piece in ("All ", "looked ", "up."):
            yield piece

    return FunctionModel(stream_function=stream, model_name="scripted")


def bare_turn(calls: int) -> Callable[[], Awaitable[Any]]:
    agent: PydanticAgent[None, str] = PydanticAgent(
        scripted_model(calls),
        instructions=INSTRUCTIONS,
        tools=[Tool(lookup, takes_ctx=False, docstring_format="auto")],
    )

    async def turn() -> Any:
        async with agent.run_stream_events("look it up") as stream:
            async for _ in stream:
                pass

    return turn


def holodeck_turn(calls: int, root: Path) -> Callable[[], Awaitable[Any]]:
    agent = Agent(load_agent(root), RunOptions(model="test"))
    model = scripted_model(calls)

    async def turn() -> Any:
        # RunOptions cannot name a model object, so swap it in with pydantic-ai's override
        with agent._agent.override(model=model):
            final = None
            async for event in agent.run("look it up"):
                final = event
        assert isinstance(final, FinalMessage) and final.text == "All looked up."
        assert len(final.tool_calls) == calls

    return turn


async def medians_ms(
    bare: Callable[[], Awaitable[Any]], holodeck: Callable[[], Awaitable[Any]], turns: int
) -> tuple[float, float]:
    """Median ms per turn of each; turns alternate so drift in the machine's load hits both."""
    for _ in range(WARMUP):
        await bare()
        await holodeck()
    samples: dict[int, list[float]] = {0: [], 1: []}
    gc.collect()
    gc.disable()  # a collection landing in one side's turns would skew the comparison
    try:
        for _ in range(turns):
            for side, turn in enumerate((bare, holodeck)):
                start = time.perf_counter()
                await turn()
                samples[side].append((time.perf_counter() - start) * 1000)
    finally:
        gc.enable()
    return statistics.median(samples[0]), statistics.median(samples[1])


async def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    many = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "agent.yaml").write_text(AGENT_YAML, encoding="utf-8")
        (root / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
        results: dict[int, tuple[float, float]] = {}
        for calls in sorted({0, 1, many}):
            results[calls] = await medians_ms(bare_turn(calls), holodeck_turn(calls, root), turns)

    print(f"median ms per turn over {turns} turns (after {WARMUP} warm-up turns)")
    print(f"{'tool calls':>10}  {'pydantic-ai':>11}  {'holodeck':>9}  {'ratio':>6}")
    for calls, (bare, holodeck) in results.items():
        print(f"{calls:>10}  {bare:>11.3f}  {holodeck:>9.3f}  {holodeck / bare:>5.2f}x")
    bare_1, holodeck_1 = results[1]
    ratio = holodeck_1 / bare_1
    (bare_0, holodeck_0), (bare_n, holodeck_n) = results[0], results[many]
    # what HoloDeck adds to a turn per tool call, the extra model round included ...
    per_call = ((holodeck_n - holodeck_0) - (bare_n - bare_0)) / many
    # ... and per additional call in the same round
    marginal = ((holodeck_n - holodeck_1) - (bare_n - bare_1)) / max(1, many - 1)
    print(f"turn with one tool call: {ratio:.2f}x the bare agent (target <= 1.5x)")
    print(f"extra per tool call: {per_call:.3f} ms over 0..{many} calls (target <= 2 ms)")
    print(f"extra per additional call in one round: {marginal:.3f} ms")


if __name__ == "__main__":
    asyncio.run(main())
