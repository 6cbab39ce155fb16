"""What the terminal shows of cases that did not pass: each one's answer beside the text
it was expected to be, with a short diff; and at the end of a run with many, the reasons
they failed, counted."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from holodeck.testing.reports import answer_diff
from holodeck.testing.reports.failure_reasons import failure_groups
from holodeck.testing.reports.terminal_text import print_labelled, print_text
from holodeck.testing.results import CaseResult, CaseRun, TestRun

# From this many cases that did not pass, the run ends with their reasons, counted.
GROUP_FAILURES_FROM = 3
NAMES_PER_GROUP = 5


def render_failure_groups(run: TestRun, console: Console) -> None:
    """`Failures by reason (...):`, then lines such as
    `12  F1 below threshold 0.90  (a, b, c, d, e and 7 more)`."""
    failing = run.summary.total - run.summary.passed
    if failing < GROUP_FAILURES_FROM:
        return
    console.print(Text(f"Failures by reason ({failing:,} cases did not pass):", style="bold"))
    groups = failure_groups(run.cases)
    width = len(f"{len(groups[0].cases):,}") if groups else 1
    for group in groups:
        names = ", ".join(group.cases[:NAMES_PER_GROUP])
        if len(group.cases) > NAMES_PER_GROUP:
            names += f" and {len(group.cases) - NAMES_PER_GROUP:,} more"
        text = Text(f"{len(group.cases):>{width},}  ", style="bold")
        text.append(group.reason, style="red")
        text.append(f"  ({names})", style="dim")
        print_text(console, text, 2)


def render_answers(
    case: CaseResult, run: CaseRun, console: Console, indent: int, *, verbose: bool
) -> None:
    """What a run that did not pass answered (unless `verbose` showed it), what was
    expected, and how they differ."""
    if run.simulation is not None or (run.error and not run.output):
        return  # a transcript (-v), or no answer at all: the error says why
    last = len(run.turns) - 1
    for index, turn in enumerate(run.turns):
        expected = turn.ground_truth or (case.ground_truth if index == last else None)
        if index != last and expected is None:
            continue
        label = f"turn {index + 1} " if len(run.turns) > 1 else ""
        if not verbose:
            _print_cut(console, f"{label}answer:   ", turn.output, "answer", indent)
        if expected is None:
            continue
        if verbose:
            print_labelled(console, f"{label}expected: ", Text(expected), indent)
        else:
            _print_cut(console, f"{label}expected: ", expected, "expected text", indent)
        if expected.strip() == turn.output.strip():
            continue
        text = Text()
        if not answer_diff.in_common(expected, turn.output):
            text.append("no word in common", style="dim")
        else:
            for space, segment in answer_diff.spaced(answer_diff.word_diff(expected, turn.output)):
                text.append(space)
                text.append(answer_diff.marked(segment), style=_DIFF_STYLES[segment.kind])
        print_labelled(console, f"{label}diff:     ", text, indent)


_DIFF_STYLES = {"same": "", "removed": "red", "added": "green", "gap": "dim", "note": "dim"}


def _print_cut(console: Console, label: str, said: str, what: str, indent: int) -> None:
    shown, note = answer_diff.cut(said, what)
    print_labelled(console, label, Text(shown if shown else "(empty)"), indent)
    if note is not None:
        print_text(console, Text(note, style="dim"), indent + len(label))
