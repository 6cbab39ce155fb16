"""Code graders: `{type: code, grader: "module.path:function"}` metrics.

The module is a file under the agent's directory (`graders.checks` is graders/checks.py),
imported the way function tools are: once per file version, in the agent's own import
space, so it can import its neighbours. The function receives one `GraderContext` (the
turn's input, answer, expected answer, tool calls, retrieval context, `turn_config`, the
case's name and the turn's index) and returns:

- `True` / `False`: score 1 or 0, passed or failed;
- a number: the score, passing at `threshold` (0.5 without one);
- a `GraderResult(score, passed=None, reason=None, details=None)`, or a dict with those
  keys: `passed` decides when given, else the score as for a number.

It may be sync (run in a worker thread) or async. An import error, an exception or a
return value of another shape is an `error` result naming the module and line: the case
fails with it only with `fail_on_error: true`.

    def exact_program(ctx: GraderContext) -> GraderResult:
        wanted = ctx.turn_config.get("turn_program", "")
        return GraderResult(score=float(wanted in ctx.agent_response))
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holodeck.testing.metrics.code import call, load_function
from holodeck.testing.metrics.sample import MetricError, Outcome, Sample
from holodeck.testing.results import MetricResult, ToolCallRecord
from holodeck.tools.errors import ToolLoadError

if TYPE_CHECKING:
    from holodeck.spec.models.evaluations import CodeMetric

DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class GraderContext:
    """What a grader sees of one turn (read-only: the collections are tuples)."""

    turn_input: str
    agent_response: str
    ground_truth: str | None
    tool_invocations: tuple[ToolCallRecord, ...]
    retrieval_context: tuple[str, ...] | None
    turn_index: int
    test_case_name: str | None
    turn_config: dict[str, Any] = field(default_factory=dict)
    structured_output: Any = None


@dataclass(frozen=True)
class GraderResult:
    """A grader's verdict: `score` 0-1; `passed` (None: decided by the threshold);
    `reason` and `details` (JSON data) go into the reports."""

    score: float
    passed: bool | None = None
    reason: str | None = None
    details: dict[str, Any] | None = None


async def evaluate_grader(metric: CodeMetric, sample: Sample, root: Path) -> MetricResult:
    file, function_name = metric.source
    threshold = metric.threshold if metric.threshold is not None else DEFAULT_THRESHOLD
    outcome = Outcome(metric.label, "code", threshold, metric.fail_on_error)
    path = root / file
    try:
        function = load_function(path, function_name)
        value = await call(function, {}, path, args=(context_of(sample),))
        result = verdict(value, function_name)
    except (MetricError, ToolLoadError) as exc:
        return outcome.error(f"grader `{metric.grader}`: {exc}")
    if not math.isfinite(result.score):
        return outcome.error(f"grader `{metric.grader}` returned a score that is not a number")
    reason = result.reason
    if result.details is not None:
        reason = f"{reason or ''} {json.dumps(result.details, default=str)}".strip()
    scored = outcome.scored(result.score, reason)
    if result.passed is None or (result.passed == (scored.status == "pass")):
        return scored
    return scored.model_copy(
        update={"status": "pass" if result.passed else "fail", "fails_case": not result.passed}
    )


def context_of(sample: Sample) -> GraderContext:
    return GraderContext(
        turn_input=sample.input,
        agent_response=sample.output,
        ground_truth=sample.ground_truth,
        tool_invocations=tuple(sample.tool_calls),
        retrieval_context=tuple(sample.retrieval_context) if sample.retrieval_context else None,
        turn_index=sample.turn_index,
        test_case_name=sample.case_name,
        turn_config=dict(sample.turn_config),
        structured_output=sample.structured_output,
    )


def verdict(value: Any, name: str) -> GraderResult:
    """The `GraderResult` a grader's return value stands for."""
    if isinstance(value, GraderResult):
        result = value
    elif isinstance(value, bool):
        result = GraderResult(score=1.0 if value else 0.0, passed=value)
    elif isinstance(value, numbers.Real):
        result = GraderResult(score=float(value))
    elif isinstance(value, dict) and "score" in value and set(value) <= _RESULT_KEYS:
        result = GraderResult(**value)
    elif type(value).__name__ == "GraderResult" and hasattr(value, "score"):
        # a GraderResult class of the grader's own, shaped like this one
        result = GraderResult(
            score=value.score,
            passed=getattr(value, "passed", None),
            reason=getattr(value, "reason", None),
            details=getattr(value, "details", None),
        )
    else:
        raise MetricError(
            f"`{name}` returned {type(value).__name__}; return True/False, a number, "
            "a GraderResult or {'score': ..., 'passed': ..., 'reason': ...}"
        )
    if not isinstance(result.score, numbers.Real) or isinstance(result.score, bool):
        raise MetricError(f"`{name}` returned a score that is not a number: {result.score!r}")
    if result.passed is not None and not isinstance(result.passed, bool):
        raise MetricError(f"`{name}` returned `passed` that is not True/False")
    if result.details is not None:
        try:
            json.dumps(result.details)
        except (TypeError, ValueError) as exc:
            raise MetricError(f"`{name}` returned details that are not JSON data: {exc}") from None
    return GraderResult(float(result.score), result.passed, result.reason, result.details)


_RESULT_KEYS = frozenset({"score", "passed", "reason", "details"})
