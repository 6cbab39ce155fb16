"""How `holodeck test` schedules cases: one case at a time goes from its start to its
first model request, then the next starts, so requests leave one after another; the
concurrency limit still holds whole cases, and a case that ends before asking the model
does not hold up the rest."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, Session
from holodeck.testing.results import TestRun
from holodeck.testing.runner import TestOptions, agent_for_tests, run_tests


def cases(count: int) -> str:
    return "".join(f"  - {{name: c{i}, input: q{i}}}\n" for i in range(count))


def definition(write: Write, test_cases: str) -> Path:
    return write(
        {
            "agent.yaml": "name: sched\nmodel: {provider: openai, name: gpt-4o}\n"
            "instructions: {inline: Answer.}\ntest_cases:\n" + test_cases,
        }
    )


def asked(messages: list[ModelMessage]) -> str:
    return next(
        str(part.content)
        for message in messages
        for part in getattr(message, "parts", [])
        if isinstance(part, UserPromptPart)
    )


def run_recording_starts(spec: Any, options: TestOptions, events: list[str]) -> TestRun:
    """Run the cases on `agent_for_tests`'s agent, adding "start" to `events` as each
    case opens its conversation (the model functions add "ask" as requests arrive)."""
    agent = agent_for_tests(spec, options)
    opened = agent.session

    def session(*args: Any, **kwargs: Any) -> Session:
        events.append("start")
        return opened(*args, **kwargs)

    agent.session = session  # type: ignore[method-assign]

    async def main() -> TestRun:
        async with agent:
            return await run_tests(spec, options, agent)

    return asyncio.run(main())


def test_cases_start_one_at_a_time_until_their_request_leaves(write: Write) -> None:
    events: list[str] = []
    in_flight: list[str] = []
    all_in = asyncio.Event()

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        events.append("ask")
        in_flight.append(asked(messages))
        if len(in_flight) == 3:
            all_in.set()
        # the three cases of the first round are all waiting for their answer at once:
        # the one-at-a-time start ends at the request, not with the case
        await asyncio.wait_for(all_in.wait(), 5)
        return ModelResponse(parts=[TextPart("ok")])

    spec = load_agent(definition(write, cases(3)))
    options = TestOptions(run=RunOptions(model=FunctionModel(answer)), concurrency=3)

    run = run_recording_starts(spec, options, events)

    assert [case.status for case in run.cases] == ["pass"] * 3, run.cases
    assert events == ["start", "ask"] * 3  # not: start, start, start, ask, ...
    assert in_flight == ["q0", "q1", "q2"]


def test_a_case_that_fails_before_its_request_lets_the_next_start(write: Write) -> None:
    broken = "  - name: c0\n    input: q0\n    files: [{path: gone.png, type: image}]\n"
    root = definition(write, broken + cases(3).split("\n", 1)[1])
    (root / "gone.png").write_bytes(b"\x89PNG")
    spec = load_agent(root)
    (root / "gone.png").unlink()  # gone by the time its case runs: it fails before asking

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("ok")])

    options = TestOptions(run=RunOptions(model=FunctionModel(answer)), concurrency=2)
    run = asyncio.run(asyncio.wait_for(run_tests(spec, options), 20))

    statuses = {case.name: case.status for case in run.cases}
    assert statuses == {"c0": "error", "c1": "pass", "c2": "pass"}, run.cases
    error = run.cases[0].runs[0].error
    assert error is not None and "gone.png" in error and "No such file" in error


def test_cases_with_servers_of_their_own_start_them_together(write: Write) -> None:
    """Each case's `scope: session` MCP server starts before its first request: cases
    are not held one at a time through those starts."""
    events: list[str] = []
    demo = Path(__file__).resolve().parents[1] / "mcp_servers" / "demo.py"
    server = (
        f"  - {{type: mcp, name: own, command: {sys.executable}, args: [{demo}], scope: session}}\n"
    )
    root = write(
        {
            "agent.yaml": "name: sched\nmodel: {provider: openai, name: gpt-4o}\n"
            "instructions: {inline: Answer.}\ntools:\n" + server + "test_cases:\n" + cases(3),
        }
    )

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        events.append("ask")
        return ModelResponse(parts=[TextPart("ok")])

    spec = load_agent(root)
    options = TestOptions(run=RunOptions(model=FunctionModel(answer)), concurrency=3)

    run = run_recording_starts(spec, options, events)
    assert [case.status for case in run.cases] == ["pass"] * 3, run.cases
    assert events[:3] == ["start"] * 3  # all three servers start at once


def test_an_agent_that_does_not_signal_runs_cases_together(write: Write) -> None:
    """An agent built without `agent_for_tests` never says when its first request starts:
    its cases are not held one at a time for their whole length."""
    all_in = asyncio.Event()
    in_flight: list[str] = []

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        in_flight.append(asked(messages))
        if len(in_flight) == 2:
            all_in.set()
        await asyncio.wait_for(all_in.wait(), 5)
        return ModelResponse(parts=[TextPart("ok")])

    spec = load_agent(definition(write, cases(2)))
    options = TestOptions(run=RunOptions(model=FunctionModel(answer)), concurrency=2)

    async def main() -> Any:
        async with Agent(spec, options.run) as agent:
            return await run_tests(spec, options, agent)

    run = asyncio.run(main())
    assert [case.status for case in run.cases] == ["pass", "pass"], run.cases
