"""The console report: a line per case as it finishes, why it failed, and a summary table.

The runner calls `render_case` as each case finishes and `render_summary` at the end;
`render_console` prints a whole saved run. Everything is built from `Text` objects, so case
outputs are never read as rich markup, and a console that is not a terminal gets plain text.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from holodeck.testing.reports import matrix_view
from holodeck.testing.reports._format import (
    FAIL_MARK,
    NOT_JUDGED,
    PASS_MARK,
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
    passed_runs,
    score_parts,
    shown_run,
    spread_lines,
    stop_text,
    summary_line,
    tokens,
    tool_check_lines,
)
from holodeck.testing.reports.failure_view import render_answers, render_failure_groups
from holodeck.testing.reports.terminal_text import print_text, printable
from holodeck.testing.results import (
    CaseResult,
    CaseRun,
    FileCheck,
    MemoryCheck,
    MetricResult,
    Status,
    TestRun,
    ToolCallRecord,
    TurnRecord,
)

__all__ = [
    "LIST_PASSING_UP_TO",
    "STATUS_STYLE",
    "listed_cases",
    "print_text",  # the comparison view prints with it too
    "printable",
    "render_case",
    "render_console",
    "render_header",
    "render_summary",
]

STATUS_STYLE: dict[Status, str] = {"pass": "bold green", "fail": "bold red", "error": "bold yellow"}


# Above this many cases, passing ones are counted, not listed (unless verbose): a suite
# of thousands shows what needs attention instead of scrolling it away.
LIST_PASSING_UP_TO = 50


def render_console(run: TestRun, console: Console, *, verbose: bool = False) -> None:
    """Print a whole run: a header, the cases, and the summary table."""
    render_header(run, console)
    listed = listed_cases(run, verbose)
    for case in listed:
        render_case(case, console, verbose)
    console.print()
    render_summary(run, console, listed)


def listed_cases(run: TestRun, verbose: bool) -> list[CaseResult]:
    """Every case, or in a big run without `verbose`, those that did not pass cleanly."""
    if verbose or len(run.cases) <= LIST_PASSING_UP_TO:
        return list(run.cases)
    return [c for c in run.cases if c.status != "pass" or c.flaky]


def render_header(run: TestRun, console: Console) -> None:
    text = Text()
    text.append(f"Testing {run.agent}", style="bold")
    text.append(f" with {run.model}")
    count = len(run.cases)
    details = [f"{count} case{'' if count == 1 else 's'}", f"run {run.run_id}"]
    if run.prompt_version:
        details.append(f"prompt {run.prompt_version}")
    if run.shard:
        details.append(f"shard {run.shard}")
    if run.merged_from:
        details.append(f"merged from {len(run.merged_from)} runs")
    if run.repeat > 1:
        details.append(f"repeat {run.repeat}")
    if run.concurrency > 1:
        details.append(f"concurrency {run.concurrency}")
    text.append(f" ({', '.join(details)})", style="dim")
    print_text(console, text, 0)


def render_case(case: CaseResult, console: Console, verbose: bool = False) -> None:
    """Print one finished case: its status line, then why it failed (all details if verbose)."""
    marks = _marks(console)
    print_text(console, _case_line(case), 0)
    if not case.runs:
        return
    if verbose:
        for run in case.runs:
            if len(case.runs) > 1:
                print_text(console, _attempt_line(run, len(case.runs)), 2)
            indent = 4 if len(case.runs) > 1 else 2
            _render_run(run, console, verbose=True, marks=marks, indent=indent)
            if run.status != "pass":
                render_answers(case, run, console, indent, verbose=True)
    else:
        shown = shown_run(case)
        assert shown is not None
        if len(case.runs) > 1 and shown.status != "pass":
            print_text(console, _attempt_line(shown, len(case.runs)), 2)
        _render_run(shown, console, verbose=False, marks=marks, indent=2)
        if shown.status != "pass":
            render_answers(case, shown, console, 2, verbose=False)
    for line in spread_lines(case):
        print_text(console, Text(f"spread: {line}", style="dim"), 2)


def render_summary(run: TestRun, console: Console, listed: list[CaseResult] | None = None) -> None:
    """The summary table (of `listed`, by default every case) and the totals line."""
    listed = run.cases if listed is None else listed
    marks = _marks(console)
    repeated = any(len(c.runs) > 1 for c in run.cases)
    utf = _utf(console)
    title = Text(f"{run.agent} · {run.model}" if utf else f"{run.agent} - {run.model}")
    table = Table(
        title=printable(title, console),
        box=box.SIMPLE_HEAD if utf else box.ASCII,
        show_edge=False,
        pad_edge=False,
    )
    table.add_column("Case", overflow="fold")
    table.add_column("Status")
    if repeated:
        table.add_column("Runs", justify="right")
    table.add_column("Metrics", overflow="fold")
    table.add_column("Tools")
    table.add_column("Time", justify="right")
    table.add_column("Tokens", justify="right", no_wrap=True)
    priced = run.summary.cost_usd is not None
    if priced:
        table.add_column("Cost", justify="right", no_wrap=True)
    for case in listed:
        row: list[Text] = [
            Text(case.name),
            _status_text(case.status, case.flaky),
        ]
        if repeated:
            row.append(Text(f"{passed_runs(case)}/{len(case.runs)}"))
        shown = shown_run(case)
        row.append(_compact_metrics(shown.metrics if shown else [], marks))
        row.append(_compact_tools(shown, marks))
        row.append(Text(duration(case_duration(case))))
        row.append(Text("{:,}/{:,}".format(*case_tokens(case))))
        if priced:
            row.append(Text(dollars(case_cost(case)) or ""))
        table.add_row(*(printable(cell, console) for cell in row))
    if listed:
        console.print(table)
    hidden = len(run.cases) - len(listed)
    if hidden:
        console.print(Text(f"{hidden:,} passing cases not listed (-v lists every case)", "dim"))
    if run.matrix:
        _render_matrix(run, console)
    render_failure_groups(run, console)
    style = "bold green" if run.summary.passed == run.summary.total else "bold red"
    if run.summary.errors and run.summary.passed + run.summary.errors == run.summary.total:
        style = "bold yellow"
    console.print(Text(summary_line(run), style=style))
    for line in run.summary.failing_tools:
        console.print(Text(line, style="bold red"), soft_wrap=True)
    if run.interrupted:
        console.print(Text("Interrupted: results are partial.", style="bold yellow"))
    note = judgement_note(run)
    if note is not None:
        console.print(Text(note, style="yellow"), soft_wrap=True)  # one line, even in logs


def _render_matrix(run: TestRun, console: Console) -> None:
    """The models side by side: a row per model, then each case on each model."""
    frame = box.SIMPLE_HEAD if _utf(console) else box.ASCII
    models = Table(title="Models side by side", box=frame, show_edge=False, pad_edge=False)
    for header in matrix_view.MODEL_HEADERS:
        models.add_column(header, overflow="fold")
    for stats in matrix_view.model_stats(run):
        models.add_row(*(printable(Text(cell), console) for cell in matrix_view.model_cells(stats)))
    console.print(models)
    cases = Table(box=frame, show_edge=False, pad_edge=False)
    for header in matrix_view.case_headers(run):
        cases.add_column(header, overflow="fold")
    for row in matrix_view.case_rows(run):
        cells = [Text(cell) for cell in matrix_view.case_cells(row)]
        if row.disagree:
            cells[0].stylize("bold yellow")
        cases.add_row(*(printable(cell, console) for cell in cells))
    console.print(cases)
    console.print(Text(matrix_view.disagreement_line(run), style="bold"))


def _utf(console: Console) -> bool:
    return console.encoding.lower().replace("_", "-").startswith("utf")


def _marks(console: Console) -> tuple[str, str]:
    return (PASS_MARK, FAIL_MARK) if _utf(console) else ("ok", "x")


def _status_text(status: Status, flaky: bool = False) -> Text:
    text = Text(status.upper(), style=STATUS_STYLE[status])
    if flaky:
        text.append(" flaky", style="magenta")
    return text


def _case_line(case: CaseResult) -> Text:
    text = Text()
    text.append(f"{case.status.upper():<5}", style=STATUS_STYLE[case.status])
    text.append(" ")
    text.append(case.name, style="bold")
    details = []
    if len(case.runs) > 1:
        details.append(f"{passed_runs(case)}/{len(case.runs)} runs passed")
    if case.flaky:
        details.append("flaky")
    details.append(duration(case_duration(case)))
    turns = sum(len(r.turns) for r in case.runs[:1])
    if turns > 1:
        details.append(f"{turns} turns")
    details.append("tokens " + tokens(*case_tokens(case)))
    cost = dollars(case_cost(case))
    if cost:
        details.append(f"cost {cost}")
    text.append(f"  ({', '.join(details)})", style="dim")
    return text


def _attempt_line(run: CaseRun, total: int) -> Text:
    text = Text(f"attempt {run.attempt}/{total}: ", style="bold")
    text.append(run.status.upper(), style=STATUS_STYLE[run.status])
    text.append(f" ({duration(run.duration_ms)})", style="dim")
    return text


def _render_run(
    run: CaseRun, console: Console, *, verbose: bool, marks: tuple[str, str], indent: int
) -> None:
    if verbose and run.simulation is not None:
        sim = run.simulation
        print_text(console, Text(f"simulated user: {sim.persona}", style="dim"), indent)
        print_text(console, Text(f"goal: {sim.goal}", style="dim"), indent + 2)
        used = tokens(sim.input_tokens, sim.output_tokens)
        print_text(console, Text(f"user model tokens: {used}", style="dim"), indent + 2)
    if verbose:
        _render_conversation(run, console, indent)
    if run.simulation is not None and (verbose or run.simulation.stopped != "goal_met"):
        met = run.simulation.stopped == "goal_met"
        text = Text("Simulation: ")
        text.append(marks[0] if met else marks[1], style="green" if met else "red")
        text.append(f" {stop_text(run.simulation)}", style="dim" if met else "red")
        print_text(console, text, indent)
    if run.error:
        print_text(console, Text(f"error: {run.error}", style="yellow"), indent)
    for metric in run.metrics:
        print_text(console, _metric_text(metric, marks), indent)
        show_reason = verbose or metric.status == "fail"
        if show_reason and metric.reason and metric.status != "error":
            print_text(console, Text(f"reason: {metric.reason}", style="dim"), indent + 4)
        if verbose and metric.judge_prompt:
            print_text(console, Text("judge prompt:", style="dim"), indent + 4)
            print_text(console, Text(metric.judge_prompt, style="dim"), indent + 6)
    check = run.tool_check
    if check is not None:
        if check.passed:
            if verbose or run.status != "pass":
                text = Text("Tools: ")
                text.append(marks[0], style="green")
                text.append(" expected calls made", style="dim")
                print_text(console, text, indent)
        else:
            text = Text("Tools: ")
            text.append(marks[1], style="red")
            print_text(console, text, indent)
            for line in tool_check_lines(check):
                print_text(console, Text(line, style="red"), indent + 4)
    afterwards: tuple[tuple[str, FileCheck | MemoryCheck | None], ...] = (
        ("Files", run.file_check),
        ("Memories", run.memory_check),
    )
    for label, found in afterwards:  # what the case left behind, checked the same way
        if found is not None and (verbose or run.status != "pass" or not found.passed):
            text = Text(f"{label}: ")
            text.append(*((marks[0], "green") if found.passed else (marks[1], "red")))
            if found.passed:
                text.append(f" {found.checked} as expected", style="dim")
            print_text(console, text, indent)
            for line in found.problems:
                print_text(console, Text(line, style="red"), indent + 4)
    failures = failed_calls_line(run)
    if failures is not None:  # shown even when the case passed: a failed call is news
        print_text(console, Text(failures, style="yellow"), indent)
    if verbose:
        used = tokens(run.input_tokens, run.output_tokens)
        timing = Text(f"time {duration(run.duration_ms)}, tokens {used}", style="dim")
        print_text(console, timing, indent)


def _metric_text(metric: MetricResult, marks: tuple[str, str]) -> Text:
    text = Text(f"{metric_label(metric.name)}: ")
    if metric.status == "error":
        text.append("ERROR", style="bold yellow")
        text.append(f" ({metric_error_text(metric)})", style="yellow")
        if not metric.judged:
            text.append(f" [{NOT_JUDGED}]", style="yellow")
        elif not metric.fails_case:
            text.append(" [does not fail the case]", style="dim")
        return text
    score, threshold = score_parts(metric)
    text.append(score if score is not None else "no score", style="bold")
    if not metric.judged:
        text.append(f" {NOT_JUDGED}", style="yellow")
    elif metric.status == "pass":
        text.append(f" {marks[0]}", style="bold green")
    else:
        text.append(f" {marks[1]}", style="bold red")
    if threshold is not None:
        text.append(f" (threshold {threshold})", style="dim")
    return text


def _render_conversation(run: CaseRun, console: Console, indent: int) -> None:
    for number, turn in enumerate(run.turns, start=1):
        label = f"turn {number}" if len(run.turns) > 1 else "conversation"
        if run.turns[-1].session:  # a simulated user who came back
            label += f" of session {turn.session + 1}"
        print_text(console, Text(f"{label} ({_turn_details(turn)}):", style="bold"), indent)
        print_text(console, _speaker("user", turn.input, "cyan"), indent + 2)
        for call in turn.tool_calls:
            _render_tool_call(call, console, indent + 2)
        for handoff in turn.handoffs:
            print_text(
                console, Text(f"handoff: {handoff_text(handoff)}", style="magenta"), indent + 2
            )
        print_text(console, _speaker(turn.agent or "agent", turn.output, "green"), indent + 2)
        if turn.structured_output is not None:
            print_text(console, Text("structured output:", style="dim"), indent + 2)
            print_text(console, Text(as_json(turn.structured_output)), indent + 4)
        for metric in turn.metrics:  # a turn scored on its own
            print_text(console, _metric_text(metric, _marks(console)), indent + 2)
            if metric.reason and metric.status != "error":
                print_text(console, Text(f"reason: {metric.reason}", style="dim"), indent + 6)
    if run.retrieval_context:
        print_text(console, Text("retrieval context:", style="bold"), indent)
        for chunk in run.retrieval_context:
            print_text(console, Text(f"- {chunk}", style="dim"), indent + 2)


def _turn_details(turn: TurnRecord) -> str:
    return f"{duration(turn.duration_ms)}, tokens {tokens(turn.input_tokens, turn.output_tokens)}"


def _speaker(who: str, said: str, style: str) -> Text:
    text = Text(f"{who}: ", style=f"bold {style}")
    text.append(said)
    return text


def _render_tool_call(call: ToolCallRecord, console: Console, indent: int) -> None:
    text = Text("tool ", style="bold magenta")
    text.append(call.name, style="bold")
    if call.agent:
        text.append(f" (sub-agent {call.agent})", style="dim")
    text.append(f" {duration(call.duration_ms)}", style="dim")
    print_text(console, text, indent)
    print_text(console, Text(f"args: {as_json(call.args)}"), indent + 2)
    if call.error:
        print_text(console, Text(f"error: {call.error}", style="red"), indent + 2)
    else:
        print_text(console, Text(f"result: {as_json(call.result)}"), indent + 2)


def _compact_metrics(metrics: list[MetricResult], marks: tuple[str, str]) -> Text:
    if not metrics:
        return Text("-", style="dim")
    text = Text()
    for index, metric in enumerate(metrics):
        if index:
            text.append(", ")
        text.append(metric_label(metric.name) + " ")
        if metric.status == "error":
            text.append("ERROR", style="yellow")
            continue
        score, _ = score_parts(metric)
        text.append((score or "-").split("/")[0] + " ")
        if not metric.judged:
            text.append(NOT_JUDGED, style="yellow")
            continue
        passed = metric.status == "pass"
        text.append(marks[0] if passed else marks[1], style="green" if passed else "red")
    return text


def _compact_tools(run: CaseRun | None, marks: tuple[str, str]) -> Text:
    if run is None:
        return Text("-", style="dim")
    if run.tool_check is None:
        text = Text("-", style="dim")
    elif run.tool_check.passed:
        text = Text(marks[0], style="green")
    else:
        issues = len(tool_check_lines(run.tool_check))
        text = Text(f"{marks[1]} {issues} issue{'s' if issues != 1 else ''}", style="red")
    if run.failed_calls:
        text.append(f" {run.failed_calls} failed", style="yellow")
    return text
