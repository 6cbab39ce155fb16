"""What a test run produced. Reports, `--compare` and the console all read these models;
every run is saved as JSON under .holodeck/runs/ and loads back into them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, model_validator

Status = Literal["pass", "fail", "error"]

# US dollars, exact while summed, a JSON number when written
Dollars = Annotated[Decimal, PlainSerializer(float, return_type=float, when_used="json")]


def total_cost(costs: Iterable[Decimal | None]) -> Decimal | None:
    """The sum, or None when one of them could not be priced (never a partial sum)."""
    total = Decimal(0)
    for cost in costs:
        if cost is None:
            return None
        total += cost
    return total


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricResult(_Record):
    """One metric on one run of a case. `status` is `error` when it could not be computed."""

    name: str  # e.g. groundedness, bleu, Professionalism (a G-Eval's name)
    kind: Literal["ai", "nlp", "rag", "geval", "code", "conversation"]
    score: float | None = None
    threshold: float | None = None
    scale_max: float = 1.0  # 5.0 for AI-judged metrics, 1.0 for NLP
    status: Status
    reason: str | None = None  # the judge's or code metric's explanation
    error: str | None = None  # why it could not be computed
    fails_case: bool = True  # False for an ERROR that does not fail the case
    # False when the answer (an offline smoke run) or the judge was the offline `test`
    # model: the score is shown but says nothing about quality, and never fails the case
    judged: bool = True
    judge_prompt: str | None = None  # kept for --verbose
    duration_ms: float = 0.0


class ToolCallRecord(_Record):
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: str | None = None
    duration_ms: float = 0.0
    agent: str = ""  # "" for the agent under test, else the sub-agent's name


class HandoffRecord(_Record):
    """The conversation passed from one agent to another in a turn (`handoffs:`)."""

    from_agent: str
    to_agent: str
    reason: str | None = None
    back: bool = False  # returned to the agent that had handed it over


class GuardrailRecord(_Record):
    """A guardrail that blocked or redacted in a turn (a blocked turn's output is its
    message)."""

    guardrail: str
    side: str  # input or output
    action: str  # block or redact
    kind: str
    reason: str | None = None  # a judge's
    agent: str = ""


class ArgMismatch(_Record):
    tool: str
    argument: str
    expected: str  # how it was expected, e.g. "regex ^Par", "≈ 20 ± 0.5"
    actual: Any = None


class ToolCheck(_Record):
    """How the calls compared with `expected_tools`."""

    passed: bool
    order: Literal["any", "in_order", "exact"] = "any"
    missing: list[str] = Field(default_factory=list)
    unexpected: list[str] = Field(default_factory=list)
    mismatched: list[ArgMismatch] = Field(default_factory=list)
    wrong_count: list[str] = Field(default_factory=list)  # e.g. "search: 3 calls, expected 1"
    out_of_order: bool = False
    # expectations met only by failed calls, e.g. "search: 3 calls, all failed: refused"
    failed: list[str] = Field(default_factory=list)


class FileCheck(_Record):
    """How the workspace's files compared with `expected_files` after the case."""

    passed: bool
    checked: int = 0  # files named in expected_files
    # one line per file that differed, e.g. "calc.py: does not contain 'a + b'"
    problems: list[str] = Field(default_factory=list)


class MemoryCheck(_Record):
    """How the user's long-term memories compared with `expected_memories` after the case."""

    passed: bool
    checked: int = 0  # entries of contains and not_contains
    # one line per entry not met, e.g. "no memory contains 'tea'"
    problems: list[str] = Field(default_factory=list)
    remembered: list[str] = Field(default_factory=list)  # the memories' texts, oldest first


class TurnRecord(_Record):
    input: str
    output: str = ""
    structured_output: Any = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    # a turn scored on its own (its `evaluations`, `ground_truth` or `turn_config`)
    ground_truth: str | None = None
    metrics: list[MetricResult] = Field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    duration_ms: float = 0.0
    model: str = ""  # the model that answered (a fallback, when one took over)
    guardrails: list[GuardrailRecord] = Field(default_factory=list)
    session: int = 0  # a simulated user's sessions count from 0
    handoffs: list[HandoffRecord] = Field(default_factory=list)
    agent: str = ""  # the agent that answered, when a handoff made it another


StopReason = Literal["goal_met", "gave_up", "off_track", "max_turns"]


class SimulationRecord(_Record):
    """How a simulated user's conversation ended (its turns are the run's `turns`)."""

    stopped: StopReason
    explanation: str | None = None  # the user's own words on why it stopped
    turns: int = 0  # answers the agent gave
    persona: str = ""
    goal: str = ""
    # what the user model used (the agent's tokens are on the turns)
    input_tokens: int = 0
    output_tokens: int = 0


class CaseRun(_Record):
    """One execution of a case (`--repeat N` makes N of them)."""

    attempt: int = 1
    status: Status
    turns: list[TurnRecord] = Field(default_factory=list)
    tool_check: ToolCheck | None = None
    file_check: FileCheck | None = None  # a case with `expected_files`
    memory_check: MemoryCheck | None = None  # a case with `expected_memories`
    metrics: list[MetricResult] = Field(default_factory=list)
    retrieval_context: list[str] = Field(default_factory=list)
    error: str | None = None  # the agent could not answer (provider error, ...)
    simulation: SimulationRecord | None = None  # a simulated user's case: how it ended
    duration_ms: float = 0.0
    failed_calls: int = 0  # tool calls of its turns (sub-agents' too) that failed
    # what the agent's model requests cost; None when the model has no known price
    cost_usd: Dollars | None = None

    @model_validator(mode="after")
    def _count_failed(self) -> CaseRun:
        self.failed_calls = sum(c.error is not None for t in self.turns for c in t.tool_calls)
        return self

    @property
    def output(self) -> str:
        return self.turns[-1].output if self.turns else ""

    @property
    def input_tokens(self) -> int:
        return sum(t.input_tokens for t in self.turns)

    @property
    def output_tokens(self) -> int:
        return sum(t.output_tokens for t in self.turns)


class CaseResult(_Record):
    name: str
    input: str
    ground_truth: str | None = None
    runs: list[CaseRun]
    status: Status  # pass only when every run passed
    pass_rate: float
    flaky: bool = False  # runs disagreed
    score_spread: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="metric -> (min, max) over runs"
    )
    # a run over several models (`--model A --model B`): the model this result is of; its
    # name is then `<case> [<model>]`
    model: str | None = None


class RunSummary(_Record):
    total: int
    passed: int
    failed: int
    errors: int
    flaky: int = 0
    duration_ms: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Dollars | None = None  # None when some case's model could not be priced
    # tools none of whose calls succeeded: "search: all 485 calls failed: <first error>"
    failing_tools: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, cases: list[CaseResult], duration_ms: float) -> RunSummary:
        """The totals of `cases` (a run's, or several shards' merged)."""
        return cls(
            total=len(cases),
            passed=sum(c.status == "pass" for c in cases),
            failed=sum(c.status == "fail" for c in cases),
            errors=sum(c.status == "error" for c in cases),
            flaky=sum(c.flaky for c in cases),
            duration_ms=duration_ms,
            input_tokens=sum(r.input_tokens for c in cases for r in c.runs),
            output_tokens=sum(r.output_tokens for c in cases for r in c.runs),
            cost_usd=total_cost(r.cost_usd for c in cases for r in c.runs),
        )


def failing_tools(cases: list[CaseResult]) -> list[str]:
    """One line per tool every call of which failed in these cases (sub-agents' too)."""
    calls: dict[str, list[ToolCallRecord]] = {}
    for case in cases:
        for run in case.runs:
            for turn in run.turns:
                for call in turn.tool_calls:
                    calls.setdefault(call.name, []).append(call)
    return [
        all_failed(name, made)
        for name, made in calls.items()
        if all(c.error is not None for c in made)
    ]


def all_failed(name: str, calls: list[ToolCallRecord]) -> str:
    """`search: all 485 calls failed: <the first call's error>`, for calls that all failed."""
    count = f"all {len(calls)} calls" if len(calls) > 1 else "its only call"
    return f"{name}: {count} failed: {calls[0].error}"


class GitState(_Record):
    """The repository the agent was tested in: its commit, and whether files had changed."""

    commit: str
    dirty: bool = False


class TestRun(_Record):
    """A whole `holodeck test` run."""

    __test__ = False

    run_id: str
    agent: str
    source: str  # the agent.yaml or image that was tested
    model: str  # provider/name actually used (after --model)
    # the instructions' version: their front matter `version`, else `auto-` and a digest
    prompt_version: str | None = None
    prompt_tags: list[str] = Field(default_factory=list)
    started_at: datetime
    concurrency: int
    repeat: int = 1
    interrupted: bool = False  # Ctrl+C: a partial report
    # the answers came from the offline `test` model: answer metrics were not judged
    offline: bool = False
    tags: list[str] = Field(default_factory=list)  # `--tag` labels, for filtering runs
    # role -> provider/name of every model the run used: "agent", "judge", "user", ...
    models: dict[str, str] = Field(default_factory=dict)
    # the definition as it was tested (secrets redacted), so runs can be told apart later
    settings: dict[str, Any] = Field(default_factory=dict)
    git: GitState | None = None  # None outside a git repository
    shard: str | None = None  # "I/N" when this run is one slice of a suite (`--shard`)
    merged_from: list[str] = Field(default_factory=list)  # run ids `test merge` combined
    # the models a matrix run compared, in the order given; each case ran on each
    matrix: list[str] = Field(default_factory=list)
    cases: list[CaseResult]
    summary: RunSummary

    @model_validator(mode="after")
    def _failing_tools(self) -> TestRun:
        self.summary.failing_tools = failing_tools(self.cases)
        return self
