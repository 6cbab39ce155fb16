"""How `holodeck chat` looks: the banner, answers streamed as they arrive (rendered as
markdown on a terminal, plain text otherwise), each tool call as it starts and ends
(nested under the sub-agent that made it), each handoff ("billing takes over: ...",
"back to triage"), usage, and one-line errors.

On a terminal everything goes to stdout. Otherwise the answer alone goes to stdout and
the rest to stderr, so `echo question | holodeck chat . > answer.txt` keeps only the answer.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from pydantic_core import to_jsonable_python
from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape
from rich.segment import Segment, Segments

from holodeck.runtime import (
    ApprovalRequired,
    Event,
    FinalMessage,
    GuardrailTriggered,
    HandedOff,
    HistoryCompacted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)

if TYPE_CHECKING:
    from rich.live import Live

SHORT = 100  # characters of arguments and results shown without --verbose
REFRESHES_PER_SECOND = 20
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


class ChatView:
    """Writes one chat's output. `markdown`: `out` is a terminal that renders markdown."""

    def __init__(self, out: TextIO, info: TextIO, *, markdown: bool, verbose: bool) -> None:
        self.out = out
        self.verbose = verbose
        self.console = Console(file=out, highlight=False) if markdown else None
        self.info = self.console or Console(file=info, highlight=False)
        self._answer: _PlainAnswer | _MarkdownAnswer | None = None
        self._segment = ""  # the answer's text since the last tool call
        self._pending: dict[str, ToolCallStarted] = {}
        self._calls = 0
        self._started = 0.0

    # --- messages --------------------------------------------------------------------

    def _say(self, markup: str) -> None:
        """A line for the user, not the answer: long ones are left to the terminal to wrap."""
        self.info.print(markup, soft_wrap=True)

    def banner(self, title: str, rows: Sequence[tuple[str, str]], hint: str | None) -> None:
        self._say(f"[bold]HoloDeck chat[/bold] · [bold cyan]{escape(title)}[/bold cyan]")
        width = max(len(label) for label, _ in rows) if rows else 0
        for label, value in rows:
            self._say(f"  [dim]{label.ljust(width)}[/dim]  {escape(value)}")
        if hint:
            self._say(f"[dim]{escape(hint)}[/dim]")

    def notice(self, text: str) -> None:
        self._say(escape(text))

    def dim(self, text: str) -> None:
        self._say(f"[dim]{escape(text)}[/dim]")

    def error(self, text: str) -> None:
        self._say(f"[bold red]error:[/bold red] {escape(text)}")

    # --- a turn ----------------------------------------------------------------------

    def turn_started(self) -> None:
        self._segment = ""
        self._pending.clear()
        self._calls = 0
        self._started = time.perf_counter()

    def event(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if not event.agent:  # a sub-agent's text reaches the user as its tool's result
                self._text(event.text)
        elif isinstance(event, ToolCallStarted):
            self._end_answer()
            self._pending[event.call_id] = event
            self._say(
                f"{_indent(event.agent)}[cyan]→[/cyan] {escape(self._call(event.name, event.args))}"
            )
        elif isinstance(event, ToolCallFinished):
            self._end_answer()
            self._pending.pop(event.call_id, None)
            self._calls += 1
            self._finished(event)
        elif isinstance(event, GuardrailTriggered):
            self._end_answer()
            self._say(f"{_indent(event.agent)}[yellow]⚠[/yellow] {escape(guardrail_line(event))}")
        elif isinstance(event, HistoryCompacted):
            self._say(f"[dim]{escape(compaction_line(event))}[/dim]")
        elif isinstance(event, HandedOff):  # the answer after it is the other agent's
            self._end_answer()
            self._say(f"[magenta]⇄[/magenta] {escape(handoff_line(event))}")
        elif isinstance(event, ApprovalRequired):
            self._end_answer()
            call = escape(self._call(event.name, event.args))
            self._say(f"{_indent(event.agent)}[yellow]?[/yellow] {call} waits for approval")
        elif isinstance(event, FinalMessage) and not event.pending:
            self._final(event)

    def approval_question(self, call: ApprovalRequired) -> str:
        """What chat asks about a call waiting for approval (its arguments in full)."""
        shown = ", ".join(f"{key}={_json(value)}" for key, value in call.args.items())
        return f"Allow {call.name}({shown})? [y/N] "

    def decided(self, call: ApprovalRequired, approved: bool, why: str = "") -> None:
        verdict = "[green]approved[/green]" if approved else "[red]denied[/red]"
        self._say(f"  {escape(call.name)} {verdict}{escape(why)}")

    def turn_finished(self, usage: Usage | None, cost: str | None = None) -> None:
        self._end_answer()
        seconds = time.perf_counter() - self._started
        parts = []
        if usage is not None:
            parts.append(
                f"{usage.total_tokens} tokens ({usage.input_tokens} in, {usage.output_tokens} out)"
            )
        if self._calls:
            parts.append(f"{self._calls} tool call{'s' if self._calls != 1 else ''}")
        if cost:
            parts.append(cost)
        parts.append(f"{seconds:.1f} s")
        self.dim("  " + " · ".join(parts))

    def turn_cancelled(self, running: Sequence[ToolCallStarted] = ()) -> None:
        """Each call in flight is said cancelled: those shown, and those `running` (the
        session's) whose start the interruption came before."""
        self._end_answer()
        for call in running:
            self._pending.setdefault(call.call_id, call)
        for started in self._pending.values():
            self._say(
                f"{_indent(started.agent)}[yellow]✗[/yellow] {escape(started.name)} cancelled"
            )
        self._pending.clear()
        self._say("[yellow]Cancelled:[/yellow] [dim]this question is not kept.[/dim]")

    def turn_failed(self, message: str) -> None:
        self._end_answer()
        self._pending.clear()
        self.error(message)

    # --- pieces ----------------------------------------------------------------------

    def _text(self, text: str) -> None:
        if self._answer is None:
            self._answer = (
                _MarkdownAnswer(self.console)
                if self.console is not None
                else _PlainAnswer(self.out)
            )
            self._segment = ""
        self._segment += text
        self._answer.add(text)

    def _end_answer(self) -> None:
        if self._answer is not None:
            self._answer.close()
            self._answer = None

    def _final(self, final: FinalMessage) -> None:
        """An answer that was not streamed as text (structured output) is shown whole."""
        if final.text.strip() == self._segment.strip():
            return
        self._end_answer()
        shown = final.text
        if final.output is not None:
            shown = json.dumps(final.output, indent=2, ensure_ascii=False)
            if self.console is not None:
                shown = f"```json\n{shown}\n```"
        self._text(shown)
        self._end_answer()

    def _finished(self, event: ToolCallFinished) -> None:
        indent = _indent(event.agent)
        took = _duration(event.duration_ms)
        if event.error is not None:
            self._say(
                f"{indent}[red]✗[/red] {escape(event.name)} [dim]{took}[/dim]: "
                f"[red]{escape(self._short(event.error))}[/red]"
            )
            return
        result = as_text(event.result)
        if self.verbose and ("\n" in result or len(result) > SHORT):
            self._say(f"{indent}[green]✓[/green] {escape(event.name)} [dim]{took}[/dim]")
            for line in result.splitlines() or [""]:
                self._say(f"{indent}  {escape(line)}")
            return
        self._say(
            f"{indent}[green]✓[/green] {escape(event.name)} [dim]{took} →[/dim] "
            f"{escape(self._short(result))}"
        )

    def _call(self, name: str, args: dict[str, Any]) -> str:
        shown = ", ".join(f"{key}={_json(value)}" for key, value in args.items())
        return f"{name}({shown if self.verbose else shorten(shown, SHORT)})"

    def _short(self, text: str) -> str:
        return text if self.verbose else shorten(text, SHORT)


def guardrail_line(event: GuardrailTriggered) -> str:
    """'guardrail no-pii (pii) redacted the question', with a judge's reason."""
    what = "question" if event.side == "input" else "answer"
    did = "blocked" if event.action == "block" else "redacted"
    line = f"guardrail {event.guardrail} ({event.kind}) {did} the {what}"
    return f"{line}: {event.reason}" if event.reason else line


def compaction_line(event: HistoryCompacted) -> str:
    """'earlier turns summarised: 40 messages into one (~2400 -> ~300 tokens)'."""
    return (
        f"earlier turns summarised: {event.summarised} messages into one, "
        f"{event.kept} kept (~{event.tokens_before} -> ~{event.tokens_after} tokens)"
    )


def handoff_line(event: HandedOff) -> str:
    """'billing takes over: invoice question' or 'back to triage'."""
    line = f"back to {event.to_agent}" if event.back else f"{event.to_agent} takes over"
    return f"{line}: {event.reason}" if event.reason else line


# --- answers ---------------------------------------------------------------------------


class _PlainAnswer:
    """The answer's text written as it arrives."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.last = ""

    def add(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        self.last = text[-1:] or self.last

    def close(self) -> None:
        if self.last and self.last != "\n":
            self.out.write("\n")
            self.out.flush()


class _MarkdownAnswer:
    """The answer rendered as markdown while it streams.

    Finished blocks (up to a blank line outside a code fence) are printed for good; the
    block still arriving is shown in a live area below them, redrawn as text comes in.
    The printed lines are always a rendering of the whole answer so far, so the result
    looks exactly as if the finished answer had been rendered at once.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.text = ""
        self.done = 0  # text[:done] is printed for good ...
        self.printed = 0  # ... as this many rendered lines
        self.live: Live | None = None

    def add(self, text: str) -> None:
        self.text += text
        cut = _finished_blocks(self.text, self.done)
        if cut > self.done:
            self._print_upto(cut)
        first = self.live is None
        if self.live is None:
            self.live = Live(
                console=self.console,
                transient=True,
                auto_refresh=True,
                refresh_per_second=REFRESHES_PER_SECOND,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self.live.start()
        # the first words show at once; later ones with the next refresh
        self.live.update(_Tail(_markdown(self.text[self.done :])), refresh=first)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        self._print_upto(len(self.text))

    def _print_upto(self, cut: int) -> None:
        lines = self.console.render_lines(
            _markdown(self.text[:cut]), self.console.options, pad=False
        )
        segments: list[Segment] = []
        for line in lines[self.printed :]:
            segments.extend(line)
            segments.append(Segment.line())
        if segments:
            self.console.print(Segments(segments))
        self.printed = len(lines)
        self.done = cut


class _Tail:
    """The last lines of a renderable: a live area must fit on the screen."""

    def __init__(self, renderable: Any) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options, pad=False)
        height = max(1, console.size.height - 2)
        for line in lines[-height:]:
            yield from line
            yield Segment.line()


def _markdown(text: str) -> Any:

    return Markdown(_hard_breaks(text))


def _finished_blocks(text: str, start: int) -> int:
    """Where the finished blocks of `text` (from `start`) end: after the last blank line
    outside a code fence that the next block's first, unindented, character follows."""
    cut = start
    fenced = False
    position = start
    lines = text[start:].split("\n")
    for index, line in enumerate(lines[:-1]):  # the last one is still arriving
        if _FENCE.match(line):
            fenced = not fenced
        following = lines[index + 1]
        if not fenced and not line.strip() and following[:1] not in ("", " ", "\t"):
            cut = position + len(line) + 1
        position += len(line) + 1
    return cut


def _hard_breaks(text: str) -> str:
    """A line break in an answer is meant as one (markdown would join the lines)."""
    lines = text.split("\n")
    fenced = False
    for index, line in enumerate(lines[:-1]):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and line.strip() and lines[index + 1].strip() and not line.endswith("  "):
            lines[index] = line + "  "
    return "\n".join(lines)


# --- formatting ------------------------------------------------------------------------


def shorten(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _indent(agent: str) -> str:
    """Two spaces, and two more for each level of sub-agent."""
    depth = agent.count("/") + 1 if agent else 0
    return "  " * (depth + 1)


def _duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:
        return repr(value)


def as_text(result: Any) -> str:
    """A tool's result as text: strings as they are, anything else as JSON."""
    if isinstance(result, str):
        return result

    return json.dumps(to_jsonable_python(result, fallback=str), ensure_ascii=False)
