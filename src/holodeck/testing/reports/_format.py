"""Wording shared by every report format, so the console, Markdown, JUnit and HTML say the
same thing the same way (e.g. `Groundedness: 4.2/5.0 ✓ (threshold 3.5)`)."""

from __future__ import annotations

import json
import math
import re
import shlex
from decimal import Decimal
from pathlib import Path
from typing import Any

from holodeck.spec.diagnostics import display_path
from holodeck.testing.results import (
    CaseResult,
    CaseRun,
    HandoffRecord,
    MetricResult,
    SimulationRecord,
    TestRun,
    ToolCheck,
    total_cost,
)

PASS_MARK = "✓"
FAIL_MARK = "✗"
NOT_JUDGED = "not judged"  # a metric of canned answers, or of the offline judge

# Control characters (other than newline and tab) that would drive a terminal: an agent's
# output with ANSI escapes must show them, not recolour the console.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with control characters shown as `\\x1b` escapes."""
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


_LABELS = {
    "bleu": "BLEU",
    "rouge": "ROUGE",
    "rouge_l": "ROUGE-L",
    "rouge1": "ROUGE-1",
    "rouge2": "ROUGE-2",
    "f1": "F1",
    "f1_score": "F1",
    "exact_match": "Exact match",
    "bertscore": "BERTScore",
}


def metric_label(name: str) -> str:
    """`groundedness` -> `Groundedness`, `bleu` -> `BLEU`; a G-Eval's own name stays as is."""
    known = _LABELS.get(name.lower())
    if known:
        return known
    if name.islower():
        words = name.replace("-", " ").replace("_", " ").split()
        return " ".join(words).capitalize() if words else name
    return name


def _decimals(score: float | None, threshold: float | None, base: int) -> int:
    """Enough decimals that a user-written threshold prints exactly and a score never prints
    equal to a threshold it is not equal to (3.46 vs 3.5 prints `3.46 ... (threshold 3.50)`)."""
    decimals = base
    while threshold is not None and decimals < 4:
        exact = math.isclose(round(threshold, decimals), threshold, abs_tol=1e-9)
        distinct = (
            score is None
            or math.isclose(score, threshold, abs_tol=1e-9)
            or f"{score:.{decimals}f}" != f"{threshold:.{decimals}f}"
        )
        if exact and distinct:
            break
        decimals += 1
    return decimals


def score_parts(metric: MetricResult) -> tuple[str | None, str | None]:
    """The score (`4.2/5.0`, `0.41`) and threshold (`3.5`, `0.30`) as printed."""
    decimals = _decimals(metric.score, metric.threshold, 1 if metric.scale_max > 1 else 2)
    score = None
    if metric.score is not None:
        score = f"{metric.score:.{decimals}f}"
        if metric.scale_max != 1.0:
            score += f"/{metric.scale_max:.1f}"
    threshold = f"{metric.threshold:.{decimals}f}" if metric.threshold is not None else None
    return score, threshold


def metric_error_text(metric: MetricResult) -> str:
    return metric.error or metric.reason or "could not be computed"


def metric_line(metric: MetricResult, *, marks: tuple[str, str] = (PASS_MARK, FAIL_MARK)) -> str:
    """`Groundedness: 4.2/5.0 ✓ (threshold 3.5)` or `Relevance: ERROR (judge timed out)`."""
    label = metric_label(metric.name)
    if metric.status == "error":
        text = f"{label}: ERROR ({metric_error_text(metric)})"
        if not metric.judged:
            return text + f" [{NOT_JUDGED}]"
        return text if metric.fails_case else text + " [does not fail the case]"
    score, threshold = score_parts(metric)
    mark = marks[0] if metric.status == "pass" else marks[1]
    if not metric.judged:
        mark = NOT_JUDGED
    text = f"{label}: {score if score is not None else 'no score'} {mark}"
    return text + (f" (threshold {threshold})" if threshold is not None else "")


def as_json(value: Any) -> str:
    """Tool arguments and results as readable JSON (strings stay unquoted)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except ValueError:  # circular structures
        return repr(value)


def short_json(value: Any) -> str:
    """An argument value inline: `"London"`, `20`, `{"a": 1}`."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:
        return repr(value)


def tool_check_lines(check: ToolCheck) -> list[str]:
    """Each way the tool calls differed from `expected_tools`, one line each."""
    lines = [f"missing: {name}" for name in check.missing]
    lines += [f"only failed calls: {text}" for text in check.failed]
    lines += [f"unexpected: {name}" for name in check.unexpected]
    lines += [
        f"wrong argument {m.tool}.{m.argument}: expected {m.expected}, got {short_json(m.actual)}"
        for m in check.mismatched
    ]
    lines += [f"wrong count: {text}" for text in check.wrong_count]
    if check.out_of_order:
        wanted = "exactly this sequence" if check.order == "exact" else "in order"
        lines.append(f"out of order: expected the calls {wanted}")
    if not check.passed and not lines:
        lines.append("tool calls did not match expected_tools")
    return lines


_STOPS = {
    "goal_met": "the user's goal was met",
    "gave_up": "the user gave up",
    "off_track": "the user stopped: the conversation went off track",
    "max_turns": "stopped at max_turns",
}


def handoff_text(handoff: HandoffRecord) -> str:
    """`billing takes over: invoice question` or `back to triage`."""
    if handoff.back:
        said = f"back to {handoff.to_agent}"
    else:
        said = f"{handoff.to_agent} takes over from {handoff.from_agent}"
    return f"{said}: {handoff.reason}" if handoff.reason else said


def stop_text(simulation: SimulationRecord) -> str:
    """`the user gave up after 3 turns (it never asked for the order number)`."""
    turns = simulation.turns
    text = f"{_STOPS[simulation.stopped]} after {turns} turn{'s' if turns != 1 else ''}"
    return text + (f" ({simulation.explanation})" if simulation.explanation else "")


def failed_calls_line(run: CaseRun) -> str | None:
    """`2 failed tool calls: search: connection refused` (each tool's first error), or None."""
    if not run.failed_calls:
        return None
    first: dict[str, str] = {}
    for turn in run.turns:
        for call in turn.tool_calls:
            if call.error is not None:
                first.setdefault(call.name, call.error)
    count = run.failed_calls
    errors = "; ".join(f"{name}: {error}" for name, error in first.items())
    return f"{count} failed tool call{'s' if count != 1 else ''}: {errors}"


def duration(ms: float) -> str:
    """`850ms`, `1.24s`, `2m 05s`."""
    if ms < 1000:
        return f"{ms:.0f}ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.2f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m {rest:02d}s"


def tokens(input_tokens: int, output_tokens: int) -> str:
    return f"{input_tokens:,} in / {output_tokens:,} out"


def dollars(cost: Decimal | None) -> str | None:
    """`$0.004210`, or None for a cost that could not be priced (shown as nothing)."""
    return None if cost is None else f"${cost:.6f}"


def case_cost(case: CaseResult) -> Decimal | None:
    return total_cost(r.cost_usd for r in case.runs)


def shown_run(case: CaseResult) -> CaseRun | None:
    """The run a one-run view shows: the first that did not pass, else the first."""
    for run in case.runs:
        if run.status != "pass":
            return run
    return case.runs[0] if case.runs else None


def case_tokens(case: CaseResult) -> tuple[int, int]:
    return (sum(r.input_tokens for r in case.runs), sum(r.output_tokens for r in case.runs))


def case_duration(case: CaseResult) -> float:
    return sum(r.duration_ms for r in case.runs)


def passed_runs(case: CaseResult) -> int:
    return sum(1 for r in case.runs if r.status == "pass")


def run_problems(run: CaseRun) -> list[str]:
    """Why a run did not pass, one line each (the error, failing metrics, tool mismatches)."""
    problems = [f"error: {run.error}"] if run.error else []
    if run.simulation is not None and run.simulation.stopped != "goal_met":
        problems.append(f"simulation: {stop_text(run.simulation)}")
    problems += [
        metric_line(m) for m in run.metrics if m.status != "pass" and (m.fails_case or m.error)
    ]
    if run.tool_check is not None and not run.tool_check.passed:
        problems += [f"tools: {line}" for line in tool_check_lines(run.tool_check)]
    if run.file_check is not None and not run.file_check.passed:
        problems += [f"files: {line}" for line in run.file_check.problems]
    if run.memory_check is not None and not run.memory_check.passed:
        problems += [f"memories: {line}" for line in run.memory_check.problems]
    if run.status != "pass" and not problems:
        problems.append(f"status {run.status}")
    return problems


def spread_lines(case: CaseResult) -> list[str]:
    """`Groundedness: 3.1–4.6 over 3 runs` for metrics whose score varied."""
    return [
        f"{metric_label(name)}: {low:.2f} to {high:.2f} over {len(case.runs)} runs"
        for name, (low, high) in sorted(case.score_spread.items())
        if not math.isclose(low, high)
    ]


def judgement_note(run: TestRun) -> str | None:
    """One line when some answer metrics were not judged: why, and how to judge them."""
    unjudged = sum(1 for c in run.cases for r in c.runs for m in r.metrics if not m.judged)
    if not unjudged:
        return None
    if run.offline:
        return (
            "Answer metrics were not judged (the offline `test` model gave canned answers; "
            "they fail no case). To judge them, run `holodeck test "
            f"{shlex.quote(display_path(Path(run.source)))}` with a real model and its API "
            "key (the agent's, or --model provider/name), or --replay a recorded cassette."
        )
    return (
        f"{unjudged} metric result{'' if unjudged == 1 else 's'} not judged: the judge is "
        "the offline `test` model. Give them a real judge (`evaluations.model` or the "
        "metric's `model`)."
    )


def summary_line(run: TestRun) -> str:
    s = run.summary
    parts = [
        f"{s.total} case{'' if s.total == 1 else 's'}",
        f"{s.passed} passed",
        f"{s.failed} failed",
        f"{s.errors} error{'' if s.errors == 1 else 's'}",
    ]
    if s.flaky:
        parts.append(f"{s.flaky} flaky")
    cost = dollars(s.cost_usd)
    return (
        ", ".join(parts)
        + f" in {duration(s.duration_ms)}; tokens {tokens(s.input_tokens, s.output_tokens)}"
        + (f"; cost {cost}" if cost else "")
    )


def pass_percent(run: TestRun) -> float:
    return 100.0 * run.summary.passed / run.summary.total if run.summary.total else 0.0


def prompt_label(run: TestRun) -> str:
    """`1.2.0 (tags: triage, billing)`: the instructions' version, and their tags."""
    label = run.prompt_version or ""
    if run.prompt_tags:
        label += f" (tags: {', '.join(run.prompt_tags)})"
    return label
