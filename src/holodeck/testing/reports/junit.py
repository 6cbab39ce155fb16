"""The JUnit XML report, in the shape CI systems read (Jenkins' junit schema and the
Ant/Surefire family): one <testsuite> per run, one <testcase> per case, <failure> for a case
that failed, <error> for one that could not run or be scored, and each case's metric scores
as suite <property> elements (the common schema allows properties only on suites)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

from holodeck.spec.diagnostics import display_path
from holodeck.testing.reports import matrix_view
from holodeck.testing.reports._format import (
    as_json,
    case_duration,
    dollars,
    duration,
    failed_calls_line,
    handoff_text,
    judgement_note,
    metric_label,
    metric_line,
    passed_runs,
    prompt_label,
    run_problems,
    spread_lines,
    stop_text,
    tokens,
    tool_check_lines,
)
from holodeck.testing.results import CaseResult, CaseRun, TestRun

_MESSAGE_LIMIT = 500


def render_junit(run: TestRun) -> str:
    s = run.summary
    seconds = _seconds(s.duration_ms)
    root = ET.Element(
        "testsuites",
        name=_clean(f"holodeck {run.agent}"),
        tests=str(s.total),
        failures=str(s.failed),
        errors=str(s.errors),
        time=seconds,
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name=_clean(run.agent),
        tests=str(s.total),
        failures=str(s.failed),
        errors=str(s.errors),
        skipped="0",
        time=seconds,
        timestamp=run.started_at.isoformat(timespec="seconds"),
        id=_clean(run.run_id),
    )
    properties = ET.SubElement(suite, "properties")
    facts = {
        "run_id": run.run_id,
        "model": run.model,
        "source": display_path(Path(run.source)),
        **({"prompt_version": prompt_label(run)} if run.prompt_version else {}),
        "started_at": run.started_at.isoformat(),
        "concurrency": str(run.concurrency),
        "repeat": str(run.repeat),
        "interrupted": str(run.interrupted).lower(),
        "offline": str(run.offline).lower(),
        "flaky": str(s.flaky),
        "input_tokens": str(s.input_tokens),
        "output_tokens": str(s.output_tokens),
        **({"cost_usd": str(s.cost_usd)} if s.cost_usd is not None else {}),
    }
    for stats in matrix_view.model_stats(run):  # a run over several models: one each
        cells = dict(zip(matrix_view.MODEL_HEADERS, matrix_view.model_cells(stats), strict=True))
        facts[f"matrix {stats.model}"] = "; ".join(f"{k}: {v}" for k, v in cells.items())
    if run.matrix:
        facts["matrix"] = matrix_view.disagreement_line(run)
    note = judgement_note(run)
    if note is not None:
        facts["not_judged"] = note
    if s.failing_tools:
        facts["failing_tools"] = "\n".join(s.failing_tools)
    for name, value in facts.items():
        ET.SubElement(properties, "property", name=name, value=_clean(value))
    for case in run.cases:
        for index, case_run in enumerate(case.runs, start=1):
            prefix = f"{case.name} :: " + (f"attempt {index} :: " if len(case.runs) > 1 else "")
            failures = failed_calls_line(case_run)
            if failures is not None:
                ET.SubElement(
                    properties,
                    "property",
                    name=_clean(prefix + "failed_calls"),
                    value=_clean(failures),
                )
            for metric in case_run.metrics:
                ET.SubElement(
                    properties,
                    "property",
                    name=_clean(prefix + metric.name),
                    value=_clean(metric_line(metric)),
                )
    for case in run.cases:
        _testcase(suite, case, run.agent)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _testcase(suite: ET.Element, case: CaseResult, agent: str) -> None:
    element = ET.SubElement(
        suite,
        "testcase",
        name=_clean(case.name),
        classname=_clean(f"holodeck.{agent}"),
        time=_seconds(case_duration(case)),
    )
    if case.status != "pass":
        problems = _problems(case)
        kind = "error" if case.status == "error" else "failure"
        message = "; ".join(problems)
        if len(message) > _MESSAGE_LIMIT:
            message = message[: _MESSAGE_LIMIT - 1] + "…"
        detail = ET.SubElement(element, kind, message=_clean(message), type=_failure_type(case))
        detail.text = _clean("\n".join(problems + _reasons(case)))
    out = ET.SubElement(element, "system-out")
    out.text = _clean(_transcript(case))


def _problems(case: CaseResult) -> list[str]:
    failing = [r for r in case.runs if r.status != "pass"]
    if len(case.runs) <= 1:
        return run_problems(failing[0]) if failing else [f"status {case.status}"]
    head = f"{passed_runs(case)}/{len(case.runs)} runs passed" + (" (flaky)" if case.flaky else "")
    lines = [head]
    for run in failing:
        lines += [f"attempt {run.attempt}: {problem}" for problem in run_problems(run)]
    return lines


def _reasons(case: CaseResult) -> list[str]:
    """The judges' explanations of the metrics that failed."""
    return [
        f"{metric_label(m.name)}"
        + (f" (attempt {r.attempt})" if len(case.runs) > 1 else "")
        + f": {m.reason}"
        for r in case.runs
        for m in r.metrics
        if m.status == "fail" and m.fails_case and m.reason
    ]


def _failure_type(case: CaseResult) -> str:
    runs = [r for r in case.runs if r.status != "pass"]
    if any(r.error for r in runs):
        return "AgentError"
    if any(m.status == "error" and m.fails_case for r in runs for m in r.metrics):
        return "MetricError"
    if any(r.tool_check is not None and not r.tool_check.passed for r in runs):
        if any(m.status == "fail" and m.fails_case for r in runs for m in r.metrics):
            return "MetricAndToolFailure"
        return "ToolMismatch"
    if any(r.file_check is not None and not r.file_check.passed for r in runs):
        return "FileMismatch"
    if any(r.memory_check is not None and not r.memory_check.passed for r in runs):
        return "MemoryMismatch"
    return "MetricFailure"


def _transcript(case: CaseResult) -> str:
    lines = [f"input: {case.input}"]
    if case.ground_truth is not None:
        lines.append(f"ground truth: {case.ground_truth}")
    lines += [f"spread: {line}" for line in spread_lines(case)]
    for run in case.runs:
        lines += _run_lines(run, len(case.runs))
    return "\n".join(lines)


def _run_lines(run: CaseRun, total: int) -> list[str]:
    lines = []
    if total > 1:
        lines.append(f"--- attempt {run.attempt}/{total}: {run.status.upper()}")
    used = tokens(run.input_tokens, run.output_tokens)
    cost = dollars(run.cost_usd)
    lines.append(
        f"time {duration(run.duration_ms)}, tokens {used}" + (f", cost {cost}" if cost else "")
    )
    if run.error:
        lines.append(f"error: {run.error}")
    if run.simulation is not None:
        sim = run.simulation
        lines.append(f"simulated user: {sim.persona} (goal: {sim.goal})")
        lines.append(f"user model tokens {tokens(sim.input_tokens, sim.output_tokens)}")
    for turn in run.turns:
        lines.append(f"user: {turn.input}")
        for call in turn.tool_calls:
            outcome = f"error: {call.error}" if call.error else as_json(call.result)
            took = duration(call.duration_ms)
            lines.append(f"tool {call.name}({as_json(call.args)}) -> {outcome} [{took}]")
        lines += [f"handoff: {handoff_text(h)}" for h in turn.handoffs]
        lines.append(f"{turn.agent or 'agent'}: {turn.output}")
    if run.simulation is not None:
        lines.append(f"simulation: {stop_text(run.simulation)}")
    lines += [metric_line(m) for m in run.metrics]
    lines += [f"reason ({m.name}): {m.reason}" for m in run.metrics if m.reason]
    if run.tool_check is not None:
        lines.append("tools: as expected" if run.tool_check.passed else "tools:")
        lines += [f"  {line}" for line in tool_check_lines(run.tool_check)]
    if run.file_check is not None:
        lines.append("files: as expected" if run.file_check.passed else "files:")
        lines += [f"  {line}" for line in run.file_check.problems]
    if run.memory_check is not None:
        lines.append("memories: as expected" if run.memory_check.passed else "memories:")
        lines += [f"  {line}" for line in run.memory_check.problems]
    failures = failed_calls_line(run)
    if failures is not None:
        lines.append(failures)
    return lines


def _seconds(ms: float) -> str:
    return f"{max(ms, 0.0) / 1000:.3f}"


def _clean(text: str) -> str:
    return _not_xml().sub("\ufffd", text)


@cache
def _not_xml() -> re.Pattern[str]:
    """Characters XML 1.0 cannot carry at all (control characters such as ANSI escapes).
    Compiled when a JUnit report is written (6 ms), not on every `holodeck test` start."""
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
