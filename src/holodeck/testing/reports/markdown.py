"""The Markdown report: a summary table, then a section per case (fits a CI job summary)."""

from __future__ import annotations

import re
from pathlib import Path

from holodeck.spec.diagnostics import display_path
from holodeck.testing.reports import matrix_view
from holodeck.testing.reports._format import (
    NOT_JUDGED,
    as_json,
    case_cost,
    case_duration,
    case_tokens,
    dollars,
    duration,
    failed_calls_line,
    handoff_text,
    judgement_note,
    metric_error_text,
    metric_label,
    metric_line,
    pass_percent,
    passed_runs,
    prompt_label,
    score_parts,
    shown_run,
    spread_lines,
    stop_text,
    tokens,
    tool_check_lines,
)
from holodeck.testing.results import CaseResult, CaseRun, MetricResult, TestRun

_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def render_markdown(run: TestRun) -> str:
    s = run.summary
    lines = [f"# Test report: {_inline(run.agent)}", ""]
    if run.interrupted:
        lines += ["> **Interrupted**: the run was stopped; results are partial.", ""]
    note = judgement_note(run)
    if note is not None:
        lines += [f"> **Not judged**: {_inline(note)}", ""]
    for line in s.failing_tools:
        lines += [f"> **Tool failing**: {_inline(line)}", ""]
    lines += [
        "| | |",
        "| --- | --- |",
        f"| Result | **{s.passed}/{s.total} passed** ({pass_percent(run):.0f}%): "
        f"{s.failed} failed, {s.errors} errors, {s.flaky} flaky |",
        f"| Model | {_cell(run.model)}{' (offline: answers not judged)' if run.offline else ''} |",
        f"| Source | {_cell(display_path(Path(run.source)))} |",
        *([f"| Prompt version | {_cell(prompt_label(run))} |"] if run.prompt_version else []),
        f"| Run | {_cell(run.run_id)} |",
        *([f"| Shard | {run.shard} |"] if run.shard else []),
        *([f"| Merged from | {_cell(', '.join(run.merged_from))} |"] if run.merged_from else []),
        f"| Started | {run.started_at.isoformat(sep=' ', timespec='seconds')} |",
        f"| Repeat / concurrency | {run.repeat} / {run.concurrency} |",
        f"| Duration | {duration(s.duration_ms)} |",
        f"| Tokens | {tokens(s.input_tokens, s.output_tokens)} |",
        f"| Cost | {dollars(s.cost_usd) or 'unknown (no price for the model)'} |",
        "",
        "## Summary",
        "",
        "| Case | Status | Runs passed | Metrics | Tools | Time | Tokens | Cost |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for case in run.cases:
        lines.append(_summary_row(case))
    if run.matrix:
        lines += _matrix_section(run)
    lines += ["", "## Cases", ""]
    for case in run.cases:
        lines += _case_section(case)
    return "\n".join(lines).rstrip() + "\n"


def _matrix_section(run: TestRun) -> list[str]:
    """The models side by side, then each case on each model (disagreements first)."""
    lines = ["", "## Models side by side", "", _row(list(matrix_view.MODEL_HEADERS))]
    lines.append("| " + " | ".join(["---"] * len(matrix_view.MODEL_HEADERS)) + " |")
    lines += [_row(matrix_view.model_cells(s)) for s in matrix_view.model_stats(run)]
    headers = matrix_view.case_headers(run)
    lines += ["", _inline(matrix_view.disagreement_line(run)), "", _row(headers)]
    lines.append("| " + " | ".join(["---"] * len(headers)) + " |")
    for row in matrix_view.case_rows(run):
        line = _row(matrix_view.case_cells(row))
        lines.append(
            line.replace("| ", "| **", 1).replace(" |", "** |", 1) if row.disagree else line
        )
    return lines


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _summary_row(case: CaseResult) -> str:
    shown = shown_run(case)
    metrics = "<br>".join(_cell(metric_line(m)) for m in (shown.metrics if shown else []))
    tools = "-"
    if shown is not None and shown.tool_check is not None:
        tools = (
            "✓"
            if shown.tool_check.passed
            else "✗ " + _cell("; ".join(tool_check_lines(shown.tool_check)))
        )
    if shown is not None and shown.failed_calls:
        tools += f" ({shown.failed_calls} failed)"
    cells = [
        _cell(case.name),
        _status(case),
        f"{passed_runs(case)}/{len(case.runs)}",
        metrics or "-",
        tools,
        duration(case_duration(case)),
        "{:,} / {:,}".format(*case_tokens(case)),
        dollars(case_cost(case)) or "-",
    ]
    return "| " + " | ".join(cells) + " |"


def _status(case: CaseResult) -> str:
    text = f"**{case.status.upper()}**"
    return text + " (flaky)" if case.flaky else text


def _case_section(case: CaseResult) -> list[str]:
    lines = [f"### {case.status.upper()}: {_inline(case.name)}", ""]
    facts = [f"{passed_runs(case)}/{len(case.runs)} runs passed"]
    if case.flaky:
        facts.append("flaky")
    facts += [duration(case_duration(case)), "tokens " + tokens(*case_tokens(case))]
    cost = dollars(case_cost(case))
    if cost:
        facts.append(f"cost {cost}")
    lines += [" · ".join(facts), "", "**Input**", "", *_code(case.input)]
    if case.ground_truth is not None:
        lines += ["**Ground truth**", "", *_code(case.ground_truth)]
    spread = spread_lines(case)
    if spread:
        lines += ["**Score spread**", "", *[f"- {_inline(line)}" for line in spread], ""]
    for run in case.runs:
        if len(case.runs) > 1:
            lines += [
                f"#### Attempt {run.attempt}: {run.status.upper()} ({duration(run.duration_ms)})",
                "",
            ]
        lines += _run_section(run)
    return lines


def _metric_table(metrics: list[MetricResult]) -> list[str]:
    lines = [
        "| Metric | Score | Threshold | Result | Reason |",
        "| --- | --- | --- | --- | --- |",
    ]
    for m in metrics:
        score, threshold = score_parts(m)
        result = {"pass": "✓ pass", "fail": "✗ fail", "error": "ERROR"}[m.status]
        if not m.judged:
            result = "ERROR, not judged" if m.status == "error" else NOT_JUDGED
        reason = m.reason or ""
        if m.status == "error":
            reason = metric_error_text(m)
            if not m.fails_case and m.judged:
                reason += " (does not fail the case)"
        lines.append(
            f"| {_cell(metric_label(m.name))} | {score or '-'} | {threshold or '-'} "
            f"| {result} | {_cell(reason)} |"
        )
    return [*lines, ""]


def _run_section(run: CaseRun) -> list[str]:
    lines: list[str] = []
    if run.error:
        lines += ["**Error**", "", *_code(run.error)]
    sim = run.simulation
    if sim is not None:
        mark = "✓" if sim.stopped == "goal_met" else "✗"
        lines += [
            f"**Simulated user**: {mark} {_inline(stop_text(sim))}",
            "",
            f"- Persona: {_inline(sim.persona)}",
            f"- Goal: {_inline(sim.goal)}",
            f"- User model tokens: {tokens(sim.input_tokens, sim.output_tokens)}",
            "",
        ]
    if run.metrics:
        lines += _metric_table(run.metrics)
    for number, turn in enumerate(run.turns, start=1):
        if turn.metrics:  # a turn scored on its own
            lines += [f"**Turn {number}**: {_inline(turn.input[:80])}", ""]
            lines += _metric_table(turn.metrics)
    check = run.tool_check
    if check is not None:
        if check.passed:
            lines += [f"**Tools**: ✓ as expected (order: {check.order})", ""]
        else:
            lines += ["**Tools**: ✗", ""]
            lines += [f"- {_inline(line)}" for line in tool_check_lines(check)] + [""]
    files = run.file_check
    if files is not None:
        if files.passed:
            lines += [f"**Files**: ✓ {files.checked} as expected", ""]
        else:
            lines += ["**Files**: ✗", ""]
            lines += [f"- {_inline(line)}" for line in files.problems] + [""]
    memories = run.memory_check
    if memories is not None:
        if memories.passed:
            lines += [f"**Memories**: ✓ {memories.checked} as expected", ""]
        else:
            lines += ["**Memories**: ✗", ""]
            lines += [f"- {_inline(line)}" for line in memories.problems] + [""]
    failures = failed_calls_line(run)
    if failures is not None:
        lines += [f"**Failed tool calls**: {_inline(failures)}", ""]
    if run.turns:
        lines += ["<details><summary>Conversation</summary>", ""]
        for number, turn in enumerate(run.turns, start=1):
            lines += [
                f"**Turn {number}**"
                + (f" of session {turn.session + 1}" if run.turns[-1].session else "")
                + f" ({duration(turn.duration_ms)}, "
                f"tokens {tokens(turn.input_tokens, turn.output_tokens)})",
                "",
                "User:",
                "",
                *_code(turn.input),
            ]
            for call in turn.tool_calls:
                who = f" (sub-agent {_inline(call.agent)})" if call.agent else ""
                lines += [f"Tool `{call.name}`{who}, {duration(call.duration_ms)}:", ""]
                lines += _code(as_json(call.args), "json")
                if call.error:
                    lines += ["Error:", "", *_code(call.error)]
                else:
                    lang = "text" if isinstance(call.result, str) else "json"
                    lines += ["Result:", "", *_code(as_json(call.result), lang)]
            for handoff in turn.handoffs:
                lines += [f"Handoff: {_inline(handoff_text(handoff))}", ""]
            who = f" ({_inline(turn.agent)})" if turn.agent else ""
            lines += [f"Agent{who}:", "", *_code(turn.output)]
            if turn.structured_output is not None:
                lines += ["Structured output:", "", *_code(as_json(turn.structured_output), "json")]
        lines += ["</details>", ""]
    prompts = [m for m in run.metrics if m.judge_prompt]
    for m in prompts:
        lines += [f"<details><summary>Judge prompt: {_cell(metric_label(m.name))}</summary>", ""]
        lines += [*_code(m.judge_prompt or ""), "</details>", ""]
    return lines


def _code(text: str, lang: str = "text") -> list[str]:
    """A fenced block whose fence is longer than any run of backticks inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{lang}", text, fence, ""]


def _inline(text: str) -> str:
    """Text that Markdown and the HTML inside it show literally, on one line."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _SPECIAL.sub(r"\\\1", text)
    return " ".join(text.split())


def _cell(text: str) -> str:
    """Text for a table cell: literal, with line breaks kept as <br>."""
    return "<br>".join(_inline(line) for line in text.splitlines() if line.strip()) or ""
