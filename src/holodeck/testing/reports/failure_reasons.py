"""Why cases did not pass, in words that are the same from case to case, so that a run
with many failures can say them once each, with a count: a metric under its threshold or
not computed, a kind of tool-check miss, an error, a simulated user that stopped short.

    >>> from holodeck.testing.results import CaseRun, ToolCheck
    >>> reasons(CaseRun(status="fail", tool_check=ToolCheck(passed=False, missing=["refund"])))
    ['tools: refund not called']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from holodeck.testing.reports._format import metric_label, score_parts, shown_run
from holodeck.testing.results import CaseResult, CaseRun, MetricResult, ToolCheck

# The first sentence of an error is what it is; the rest (a fix, a detail) varies less
# usefully, and a group's line stays short.
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)")
REASON_CHARS = 100


@dataclass
class FailureGroup:
    reason: str
    cases: list[str] = field(default_factory=list)


def reasons(run: CaseRun) -> list[str]:
    """Why `run` did not pass, one reason each, worded to group."""
    found: list[str] = []
    if run.error:
        found.append(f"error: {_short(run.error)}")
    if run.simulation is not None and run.simulation.stopped != "goal_met":
        found.append(f"simulated user: {run.simulation.stopped.replace('_', ' ')}")
    found += [_metric_reason(m) for m in run.metrics if m.status != "pass" and m.fails_case]
    if run.tool_check is not None and not run.tool_check.passed:
        found += _tool_reasons(run.tool_check)
    if run.file_check is not None and not run.file_check.passed:
        found += [f"files: {_tool(line)} not as expected" for line in run.file_check.problems]
    if run.memory_check is not None and not run.memory_check.passed:
        found += [f"memories: {line}" for line in run.memory_check.problems]
    if run.status != "pass" and not found:
        found.append(f"status {run.status}")
    return list(dict.fromkeys(found))


def case_reasons(case: CaseResult) -> list[str]:
    """Why `case` did not pass (its first run that did not); none when it passed."""
    run = shown_run(case)
    return reasons(run) if run is not None and case.status != "pass" else []


def failure_groups(cases: list[CaseResult]) -> list[FailureGroup]:
    """The reasons the cases that did not pass failed, most frequent first; a case with
    several reasons is counted under each."""
    groups: dict[str, FailureGroup] = {}
    for case in cases:
        for reason in case_reasons(case):
            groups.setdefault(reason, FailureGroup(reason)).cases.append(case.name)
    return sorted(groups.values(), key=lambda group: -len(group.cases))


def _metric_reason(metric: MetricResult) -> str:
    label = metric_label(metric.name)
    if metric.status == "error":
        return f"{label}: could not be computed"
    _, threshold = score_parts(metric)
    return f"{label} below threshold {threshold}" if threshold is not None else f"{label} failed"


def _tool_reasons(check: ToolCheck) -> list[str]:
    found = [f"tools: {name} not called" for name in check.missing]
    found += [f"tools: {_tool(text)}: only failed calls" for text in check.failed]
    found += [f"tools: {name} called unexpectedly" for name in check.unexpected]
    found += [f"tools: wrong argument {m.tool}.{m.argument}" for m in check.mismatched]
    found += [f"tools: {_tool(text)} called a wrong number of times" for text in check.wrong_count]
    if check.out_of_order:
        found.append("tools: calls out of order")
    return found or ["tools: calls did not match expected_tools"]


def _tool(text: str) -> str:
    """`search` from `search: 3 calls, expected 1`."""
    return text.split(":", 1)[0]


def _short(error: str) -> str:
    line = error.strip().splitlines()[0] if error.strip() else error
    match = _FIRST_SENTENCE.match(line)
    text = match.group(1).rstrip(".") if match else line
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"
