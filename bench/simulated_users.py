"""Simulated users: tokens and wall time per simulated conversation of 6 turns against a
scripted model, and the runner's overhead per turn beside a scripted 6-turn case.

One scripted model (no network) plays both sides: asked through the `user_turn` tool it is
the user (a message for each of 6 turns, then `stop: goal_met`), otherwise it is the
agent (a tool call, then an answer). With `latency` each model call waits that long first.
Overhead per turn is the wall time per turn with no latency: what the runner, the session,
the tool call and (for the simulation) the user model's structured call cost.

Run: .venv/bin/python bench/simulated_users.py [conversations] [latency_s]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.llm.offline_script import USER_TOOL
from holodeck.testing.results import TestRun
from holodeck.testing.runner import TestOptions, run_tests

TURNS = 6


class Counts:
    user_calls = 0
    user_chars = 0  # characters the user model was sent (its prompt grows with the turns)


def scripted(latency: float, counts: Counts) -> FunctionModel:
    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if latency:
            await asyncio.sleep(latency)
        if info.output_tools and info.output_tools[0].name == USER_TOOL:  # the user's side
            prompt = "".join(
                str(p.content) for m in messages if isinstance(m, ModelRequest) for p in m.parts
            )
            counts.user_calls += 1
            counts.user_chars += len(prompt) + len(info.instructions or "")
            said = prompt.count("You: ")
            args = (
                {"action": "message", "message": f"question {said + 1}"}
                if said < TURNS
                else {"action": "stop", "reason": "goal_met", "explanation": "done"}
            )
            return ModelResponse(parts=[ToolCallPart(USER_TOOL, args, tool_call_id="u1")])
        last = messages[-1]  # the agent's side: a tool call, then an answer
        answered = isinstance(last, ModelRequest) and any(
            isinstance(p, ToolReturnPart) for p in last.parts
        )
        if not answered:
            return ModelResponse(parts=[ToolCallPart("lookup", {"q": "x"}, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart("The answer is 42.")])

    return FunctionModel(respond, model_name="scripted")


def agent_dir(conversations: int, simulated: bool) -> Path:
    root = Path(tempfile.mkdtemp(prefix="holodeck-bench-sim-"))
    (root / "tools.py").write_text("def lookup(q: str) -> str:\n    return 'found ' + q\n")
    lines = [
        "name: bench",
        "model: {provider: openai, name: gpt-4o}",
        "instructions: {inline: Answer.}",
        "tools:",
        "  - {type: function, name: lookup, file: tools.py, function: lookup}",
        "test_cases:",
    ]
    for i in range(conversations):
        if simulated:
            lines.append(
                f"  - {{name: c{i}, simulate: {{persona: A user, goal: Six answers, "
                f"max_turns: {TURNS}}}}}"
            )
        else:
            turns = ", ".join(f"{{input: question {n}}}" for n in range(1, TURNS + 1))
            lines.append(f"  - {{name: c{i}, turns: [{turns}]}}")
    (root / "agent.yaml").write_text("\n".join(lines) + "\n")
    return root


def measure(conversations: int, latency: float, simulated: bool) -> tuple[TestRun, float, Counts]:
    counts = Counts()
    spec = load_agent(agent_dir(conversations, simulated))
    options = TestOptions(run=RunOptions(model=scripted(latency, counts)), concurrency=1)
    clock = time.perf_counter()
    run = asyncio.run(run_tests(spec, options))
    return run, time.perf_counter() - clock, counts


def main() -> None:
    conversations = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    latency = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05

    run, wall, counts = measure(conversations, latency, simulated=True)
    turns = sum(len(r.turns) for c in run.cases for r in c.runs)
    assert turns == conversations * TURNS, turns
    assert run.summary.passed == conversations, run.summary
    calls = counts.user_calls + turns * 2
    sims = [r.simulation for c in run.cases for r in c.runs if r.simulation is not None]
    user_in = sum(s.input_tokens for s in sims)
    user_out = sum(s.output_tokens for s in sims)
    per = 1 / conversations
    print(
        f"{conversations} simulated conversations of {TURNS} turns, {latency * 1000:.0f} ms a call"
    )
    print(
        f"  per conversation: wall {wall * per * 1000:.0f} ms (model calls {calls * per:.0f}: "
        f"{counts.user_calls * per:.0f} user, {turns * 2 * per:.0f} agent; "
        f"ideal {calls * per * latency * 1000:.0f} ms)"
    )
    print(
        f"  tokens (the scripted model's estimates): agent {run.summary.input_tokens * per:,.0f}"
        f" in / {run.summary.output_tokens * per:,.0f} out; user model {user_in * per:,.0f} in /"
        f" {user_out * per:,.0f} out ({counts.user_chars * per:,.0f} characters of prompts)"
    )

    for simulated in (False, True):
        run, wall, _ = measure(conversations, 0.0, simulated)
        label = "simulated user" if simulated else "scripted turns"
        per_turn = wall / (conversations * TURNS) * 1000
        print(f"  runner overhead per turn, no latency, {label}: {per_turn:.1f} ms")


if __name__ == "__main__":
    main()
