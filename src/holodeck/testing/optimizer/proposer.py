"""The proposer: a model that reads the failing train cases and writes new instructions,
answering through the structured-output machinery judges use."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field

from holodeck.runtime import RunOptions, StructuredModel
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.optimizer import OptimizerSettings
from holodeck.testing.results import CaseResult

TOOL = "propose_instructions"
MOST_CASES = 8  # failing cases shown to the proposer
MOST_CHARS = 1500  # of one answer, tool result or expected value
INSTRUCTIONS = """\
You improve the system instructions of an AI agent. You are given its current
instructions and test cases it fails: each with the user's input, the agent's answer,
the expected answer, the tools it called and why the checks failed. Write complete new
instructions that make the agent pass cases like these, without naming the cases one by
one: the new text is kept only if it also helps cases you have not seen. Keep what the
current instructions get right. Answer with the tool `propose_instructions`."""


class Proposal(BaseModel):
    instructions: str = Field(description="The complete new instructions text.")
    reason: str = Field(default="", description="What changed, and why it should help.")


def proposer_settings(spec: AgentSpec, settings: OptimizerSettings) -> ModelSettings | None:
    """`optimizer.proposer`, else the judges' model, else the agent's."""
    judges = spec.evaluations.model if spec.evaluations is not None else None
    return settings.proposer or judges or spec.model


class Proposer:
    def __init__(self, spec: AgentSpec, settings: OptimizerSettings, options: RunOptions):
        self.model = StructuredModel(
            proposer_settings(spec, settings),
            options.for_agent(spec),
            spec.execution,
            name="proposer",
        )

    @property
    def label(self) -> str:
        return (
            f"{self.model.provider}/{self.model.name}" if self.model.name else self.model.provider
        )

    async def propose(
        self, current: str, failing: Sequence[CaseResult], tried: Sequence[str]
    ) -> Proposal:
        return await self.model.ask(
            prompt(current, failing, tried),
            Proposal,
            instructions=INSTRUCTIONS,
            tool=TOOL,
            description="Propose new instructions for the agent.",
        )


def prompt(current: str, failing: Sequence[CaseResult], tried: Sequence[str]) -> str:
    parts = ["## Current instructions", current or "(none)", "", "## Failing cases"]
    for case in failing[:MOST_CASES]:
        parts.append(describe(case))
    if tried:
        parts += ["", "## Proposals already tried and not kept (do not repeat them)"]
        parts += [f"- {_cut(text)}" for text in tried]
    return "\n".join(parts)


def describe(case: CaseResult) -> str:
    """One case as the proposer reads it: input, answer, expected, tool calls, checks."""
    run = case.runs[-1]
    lines = [f"### {case.name}", f"input: {_cut(case.input)}"]
    lines.append(f"answer: {_cut(run.output) if run.turns else '(none)'}")
    if case.ground_truth:
        lines.append(f"expected: {_cut(case.ground_truth)}")
    for turn in run.turns:
        for call in turn.tool_calls:
            shown = call.error or json.dumps(call.result, default=str)
            lines.append(f"tool call: {call.name}({json.dumps(call.args)}) -> {_cut(shown)}")
    if run.error:
        lines.append(f"error: {_cut(run.error)}")
    check = run.tool_check
    if check is not None and not check.passed:
        problems = [*(f"missing {m}" for m in check.missing), *check.wrong_count]
        problems += [f"unexpected {u}" for u in check.unexpected]
        problems += [f"{m.tool}.{m.argument} expected {m.expected}" for m in check.mismatched]
        lines.append("tool check failed: " + "; ".join(problems or ["out of order"]))
    for metric in run.metrics:
        if metric.status != "pass":
            shown = metric.reason or metric.error or ""
            lines.append(f"metric {metric.name}: {metric.status} (score {metric.score}) {shown}")
    return "\n".join(lines)


def _cut(text: str) -> str:
    return text if len(text) <= MOST_CHARS else text[:MOST_CHARS] + " [...]"
