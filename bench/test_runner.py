"""`holodeck test` throughput: N cases against a scripted model with fixed latency.

Each case makes two model calls (one asking for a tool, one answering). The ideal wall
time is cases x calls x latency / concurrency; the target is within 1.3x of it.

Run: .venv/bin/python bench/test_runner.py [cases] [latency_s]
"""

from __future__ import annotations

import asyncio
import resource
import sys
import tempfile
import time
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.testing.runner import DEFAULT_CONCURRENCY, TestOptions, run_tests

CALLS_PER_CASE = 2


def scripted(latency: float) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
        await asyncio.sleep(latency)
        last = messages[-1]
        answered = isinstance(last, ModelRequest) and any(
            isinstance(p, ToolReturnPart) for p in last.parts
        )
        if not answered:
            yield {0: DeltaToolCall("lookup", '{"q": "x"}', tool_call_id="c1")}
            return
        yield "The answer is 42."

    return FunctionModel(stream_function=stream, model_name="scripted")


def agent_dir(cases: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="holodeck-bench-"))
    (root / "tools.py").write_text("def lookup(q: str) -> str:\n    return 'found ' + q\n")
    lines = [
        "name: bench",
        "model: {provider: openai, name: gpt-4o}",
        "instructions: {inline: Answer.}",
        "tools:",
        "  - {type: function, name: lookup, file: tools.py, function: lookup}",
        "test_cases:",
    ]
    lines += [
        f"  - {{name: c{i}, input: question {i}, expected_tools: [lookup]}}" for i in range(cases)
    ]
    (root / "agent.yaml").write_text("\n".join(lines) + "\n")
    return root


def main() -> None:
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    latency = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
    spec = load_agent(agent_dir(cases))
    options = TestOptions(run=RunOptions(model=scripted(latency)), concurrency=DEFAULT_CONCURRENCY)
    clock = time.perf_counter()
    run = asyncio.run(run_tests(spec, options))
    wall = time.perf_counter() - clock
    ideal = cases * CALLS_PER_CASE * latency / options.concurrency
    passed = run.summary.passed
    print(
        f"{cases} cases, {latency * 1000:.0f} ms per model call, concurrency {options.concurrency}"
    )
    print(f"wall {wall:.2f} s, ideal {ideal:.2f} s, ratio {wall / ideal:.2f}x (target <= 1.3x)")
    print(f"passed {passed}/{cases}")
    # peak resident memory of the process (tracing allocations would skew the timing)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (max RSS) {rss:.0f} MiB")


if __name__ == "__main__":
    main()
