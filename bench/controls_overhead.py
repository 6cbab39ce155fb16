"""What the controls cost per turn: the same agent and scripted model with no controls,
and with all of them on (turn and session caps on cost, tokens, requests and tool calls; a
fallback model behind the agent's; a tools_policy filtering its tools; input and output
guardrails: a regex, PII redaction, a length and a keyword check, so the answer's text is
held until its checks pass; human approval configured for `delete_*`, which this agent's
calls never trigger: what every turn pays for the check and the paused-turn output type).
A judge check is left out: it is one more model request, whose cost is the judge model's
latency, not HoloDeck's. A third line is a turn whose every call waits for approval and
is approved at once: the turn pauses, is decided and resumes (one more model request per
turn: the model is asked again after the pause).

Both run turns of one session against a zero-latency scripted model (a pydantic-ai
FunctionModel that streams N calls of one async tool, then a short answer) named like a
priced model, so the cost caps are enforced as they would be. Caps are set high enough
never to stop a turn: the figure is their bookkeeping.

Run: .venv/bin/python bench/controls_overhead.py [turns] [tool calls per turn]
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic_ai.models.fallback import FallbackModel

from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, FinalMessage, Session
from holodeck.runtime._events import final_message

sys.path.insert(0, str(Path(__file__).parent))
from runtime_overhead import TOOLS_PY, scripted_model

WARMUP = 20
PLAIN = """
name: bench
model: {provider: openai, name: gpt-4o-mini, api_key: sk-bench}
instructions: {inline: You look things up.}
tools:
  - {type: function, name: lookup, file: tools.py, function: lookup}
"""
CONTROLLED = (
    PLAIN.replace("api_key: sk-bench}", "api_key: sk-bench, fallbacks: [openai/gpt-4o]}")
    + """
limits:
  turn: {max_cost_usd: 100, max_tokens: 100000000, max_requests: 50, max_tool_calls: 1000}
  session:
    {max_cost_usd: 100000, max_tokens: 1000000000, max_requests: 1000000, max_tool_calls: 1000000}
tools_policy:
  allow: ["look*"]
  deny: ["delete_*"]
guardrails:
  input:
    - {block_patterns: ["(?i)ignore (all )?previous instructions"]}
    - {pii: [email, phone, card], action: redact}
    - {max_length: 4000}
  output:
    - {block_keywords: [password]}
    - {pii: [email, phone, card], action: redact}
approval:
  require: ["delete_*"]
"""
)
APPROVED = PLAIN + "approval:\n  require: [lookup]\n"


def session_turn(
    root: Path, calls: int, fallback: bool
) -> tuple[Agent, Callable[[], Awaitable[Any]]]:
    agent = Agent(load_agent(root), RunOptions(env={"OPENAI_API_KEY": "sk-bench"}))
    model: Any = scripted_model(calls)
    model._model_name = "gpt-4o-mini"  # priced, as the agent's own model is
    if fallback:  # the fallback chain the agent built, with the scripted model first
        model = FallbackModel(model, scripted_model(calls))
    session: Session = agent.session(max_messages=4)

    async def turn() -> Any:
        with agent._agent.override(model=model):
            final = await session.answer("look it up")
            while final.pending:  # approved at once, as a person at the keyboard would
                for call in final.pending:
                    session.decide(call.call_id, True)
                final = await final_message(session.resume())
        assert isinstance(final, FinalMessage) and len(final.tool_calls) == calls

    return agent, turn


async def medians_ms(
    plain: Callable[[], Awaitable[Any]], controlled: Callable[[], Awaitable[Any]], turns: int
) -> tuple[float, float]:
    """Median ms per turn of each; turns alternate so drift in the machine's load hits both."""
    for _ in range(WARMUP):
        await plain()
        await controlled()
    samples: dict[int, list[float]] = {0: [], 1: []}
    gc.collect()
    gc.disable()
    try:
        for _ in range(turns):
            for side, turn in enumerate((plain, controlled)):
                start = time.perf_counter()
                await turn()
                samples[side].append((time.perf_counter() - start) * 1000)
    finally:
        gc.enable()
    return statistics.median(samples[0]), statistics.median(samples[1])


async def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as directory:
        plain_root, controlled_root = Path(directory) / "plain", Path(directory) / "controlled"
        approved_root = Path(directory) / "approved"
        for root, yaml in (
            (plain_root, PLAIN),
            (controlled_root, CONTROLLED),
            (approved_root, APPROVED),
        ):
            root.mkdir()
            (root / "agent.yaml").write_text(yaml, encoding="utf-8")
            (root / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
        plain_agent, plain = session_turn(plain_root, calls, fallback=False)
        controlled_agent, controlled = session_turn(controlled_root, calls, fallback=True)
        approved_agent, approved = session_turn(approved_root, calls, fallback=False)
        assert controlled_agent.spec.limits is not None and plain_agent.spec.limits is None
        assert controlled_agent.spec.guardrails is not None
        assert controlled_agent.spec.approval is not None
        async with plain_agent, controlled_agent, approved_agent:
            bare_ms, controls_ms = await medians_ms(plain, controlled, turns)
            bare2_ms, approved_ms = await medians_ms(plain, approved, turns)
    print(f"median ms per session turn with {calls} tool call(s), over {turns} turns")
    print(f"  no controls:                   {bare_ms:.3f}")
    print(f"  all on (approval not asked):   {controls_ms:.3f}")
    print(f"  ratio:                         {controls_ms / bare_ms:.2f}x")
    print(f"  no controls (second run):      {bare2_ms:.3f}")
    print(f"  every call approved at once:   {approved_ms:.3f}")
    print(f"  ratio:                         {approved_ms / bare2_ms:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
