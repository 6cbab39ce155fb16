"""What a metric scores (`Sample`), and the shapes of its outcome (`MetricResult` helpers)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from holodeck.errors import ExecutionError
from holodeck.testing.results import MetricResult, ToolCallRecord, TurnRecord

Kind = Literal["ai", "nlp", "rag", "geval", "code", "conversation"]


@dataclass(frozen=True)
class Sample:
    """One answer to score: the case's last input, the agent's final output, the expected
    answer (`ground_truth`), the retrieval context (the case's `retrieval_context`, or what
    the tools returned), every tool call of the case, and the structured output if any."""

    input: str
    output: str
    ground_truth: str | None = None
    retrieval_context: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    structured_output: Any = None
    # for code graders: which turn (0-based), the case's name, the turn's `turn_config`
    turn_index: int = 0
    case_name: str | None = None
    turn_config: dict[str, Any] = field(default_factory=dict)
    # conversation metrics: every turn so far, and a simulated user's goal
    conversation: tuple[TurnRecord, ...] = ()
    goal: str | None = None

    @property
    def has_ground_truth(self) -> bool:
        return self.ground_truth is not None and self.ground_truth.strip() != ""

    @property
    def has_context(self) -> bool:
        return any(chunk.strip() for chunk in self.retrieval_context)


class MetricError(ExecutionError):
    """The metric cannot be computed for this sample; the message says why."""


@dataclass
class Outcome:
    """Builds a `MetricResult` for one metric, timing it from creation."""

    name: str
    kind: Kind
    threshold: float | None
    fail_on_error: bool
    scale_max: float = 1.0
    judge_prompt: str | None = None
    started: float = field(default_factory=time.perf_counter)

    def scored(self, score: float, reason: str | None = None) -> MetricResult:
        """Pass when `score >= threshold`; without a threshold the metric is informational."""
        if not math.isfinite(score):
            return self.error(f"the score is not a number ({score})")
        passed = self.threshold is None or score >= self.threshold
        return self._result(status="pass" if passed else "fail", score=score, reason=reason)

    def error(self, message: str) -> MetricResult:
        """Could not be computed: fails the case only with `fail_on_error: true`."""
        return self._result(status="error", error=message, fails_case=self.fail_on_error)

    def _result(self, **fields: Any) -> MetricResult:
        fields.setdefault("fails_case", fields.get("status") == "fail")
        return MetricResult(
            name=self.name,
            kind=self.kind,
            threshold=self.threshold,
            scale_max=self.scale_max,
            judge_prompt=self.judge_prompt,
            duration_ms=(time.perf_counter() - self.started) * 1000,
            **fields,
        )
