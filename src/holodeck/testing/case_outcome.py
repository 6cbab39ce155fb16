"""What a test case's turns come to: the agent's own calls, their tool checks merged,
the retrieval context a judge reads, the tool results a report keeps, and the case's
summary over its repeats."""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import to_jsonable_python

from holodeck.spec.models.cases import TestCase
from holodeck.testing.results import CaseResult, CaseRun, ToolCallRecord, ToolCheck, TurnRecord
from holodeck.testing.simulation import case_goal


def own_calls(record: TurnRecord) -> list[ToolCallRecord]:
    """The calls the agent under test made itself (not its sub-agents' calls)."""
    return [c for c in record.tool_calls if not c.agent]


def merged(checks: list[ToolCheck]) -> ToolCheck | None:
    if not checks:
        return None
    if len(checks) == 1:
        return checks[0]
    return ToolCheck(
        passed=all(c.passed for c in checks),
        order=checks[0].order,
        missing=[m for c in checks for m in c.missing],
        unexpected=list(dict.fromkeys(u for c in checks for u in c.unexpected)),
        mismatched=[m for c in checks for m in c.mismatched],
        wrong_count=[w for c in checks for w in c.wrong_count],
        out_of_order=any(c.out_of_order for c in checks),
        failed=[f for c in checks for f in c.failed],
    )


def retrieved(records: list[TurnRecord]) -> list[str]:
    """Retrieval context: what the agent's own tool calls (function, MCP, vectorstore,
    sub-agent...) returned, turn by turn in the order the calls were made. Calls that
    failed, and a sub-agent's inner calls (the agent saw only its answer), are left out."""
    chunks = []
    for record in records:
        for call in own_calls(record):
            if call.error is not None:
                continue
            chunk = as_text(call.result)
            if chunk.strip():
                chunks.append(chunk)
    return chunks


def as_text(result: Any) -> str:
    """A tool's result as the judge reads it: text as is, data as JSON."""
    if isinstance(result, str):
        return result
    if result is None:
        return ""
    return json.dumps(result, ensure_ascii=False, default=str)


def summarised(name: str, case: TestCase, runs: list[CaseRun]) -> CaseResult:
    passed = sum(r.status == "pass" for r in runs)
    statuses = {r.status for r in runs}
    status = "pass" if statuses == {"pass"} else ("error" if "error" in statuses else "fail")
    spread: dict[str, tuple[float, float]] = {}
    for metric in {m.name for r in runs for m in r.metrics}:
        scores = [
            m.score for r in runs for m in r.metrics if m.name == metric and m.score is not None
        ]
        if scores:
            spread[metric] = (min(scores), max(scores))
    return CaseResult(
        name=name,
        input=case.input or (case.turns[0].input if case.turns else case_goal(case)),
        ground_truth=case.ground_truth,
        runs=runs,
        status=status,
        pass_rate=passed / len(runs),
        flaky=len(statuses) > 1,
        score_spread=spread,
    )


def jsonable(value: Any) -> Any:
    """Tool results as JSON-compatible data, for reports."""

    try:
        return to_jsonable_python(value, fallback=str)
    except (TypeError, ValueError):
        return str(value)
