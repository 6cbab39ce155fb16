"""What a `holodeck chat` session remembers and does, apart from the terminal: the
conversation (trimmed to the last N messages, saved to a session file after each turn),
tokens and cost so far, a transcript, the slash commands, and the prompt loop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import traceback
from collections.abc import AsyncGenerator, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, cast

from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from holodeck.atomic_write import write_atomically
from holodeck.cli.chat_view import ChatView, as_text, shorten
from holodeck.errors import ConfigurationError
from holodeck.llm.cassette import CassetteError
from holodeck.llm.errors import ProviderError
from holodeck.runtime.agent import Agent, TurnError
from holodeck.runtime.events import Event, FinalMessage, TextDelta, ToolCallFinished, Usage
from holodeck.runtime.history import starts_turn, trim_history
from holodeck.spec.agent_spec import AgentSpec
from holodeck.spec.tools import (
    AgentTool,
    FunctionTool,
    McpTool,
    PromptTool,
    TypeScriptTool,
    VectorstoreTool,
)

EXIT_WORDS = ("exit", "quit")
KEYS_HINT = (
    "Enter sends · Esc then Enter (or Alt+Enter) adds a line · /help lists commands · "
    "exit, quit or Ctrl+D leaves"
)
HELP = """\
Commands:
  /help          this help
  /tools         the agent's tools, skills and sub-agents
  /usage         tokens (and cost, when it can be priced) so far
  /reset         forget the conversation and start again
  /save FILE     write the transcript so far to FILE as markdown
  /exit, /quit   leave (so do `exit`, `quit` and Ctrl+D)
Keys:
  Enter          send
  Esc then Enter add a line (Alt+Enter does the same in most terminals)
  Up, Down       earlier questions of this session
  Ctrl+C         cancel the answer being written; at the prompt, clear the line,
                 or on an empty line press it twice to leave"""


Outcome = Literal["answered", "cancelled", "failed"]


class SessionError(ConfigurationError):
    """A session file cannot be read or written."""


# --- the transcript --------------------------------------------------------------------


@dataclass
class Exchange:
    """One question, the tool calls made for it and the answer (for /save)."""

    prompt: str
    calls: list[ToolCallFinished] = field(default_factory=list)
    answer: str = ""
    status: Literal["answered", "cancelled", "failed", "reset", "resumed"] = "answered"
    note: str = ""

    def record(self, event: Event) -> None:
        if isinstance(event, ToolCallFinished):
            self.calls.append(event)
        elif isinstance(event, TextDelta) and not event.agent:
            self.answer += event.text  # what a cancelled answer had written
        elif isinstance(event, FinalMessage):
            self.answer = event.text


def exchanges_from(messages: Sequence[ModelMessage]) -> list[Exchange]:
    """A resumed conversation as exchanges: each prompt, its tool calls and its answer."""
    exchanges: list[Exchange] = []
    calls: dict[str, ToolCallPart] = {}
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and starts_turn(message):
                    text = part.content if isinstance(part.content, str) else "[attachments]"
                    exchanges.append(Exchange(text, status="resumed"))
                elif isinstance(part, ToolReturnPart) and exchanges:
                    called = calls.get(part.tool_call_id)
                    args = called.args_as_dict() if called is not None else {}
                    exchanges[-1].calls.append(
                        ToolCallFinished(
                            part.tool_call_id, part.tool_name, args, part.content, None, 0
                        )
                    )
        elif exchanges:
            for reply in message.parts:
                if isinstance(reply, ToolCallPart):
                    calls[reply.tool_call_id] = reply
            texts = [p.content for p in message.parts if isinstance(p, TextPart)]
            if texts:
                exchanges[-1].answer = "".join(texts)
    return exchanges


def transcript_markdown(agent_name: str, exchanges: Sequence[Exchange]) -> str:
    lines = [f"# Chat with {agent_name}", ""]
    for exchange in exchanges:
        if exchange.status == "reset":
            lines += ["---", "", "*The conversation was reset.*", ""]
            continue
        lines += ["## You", "", exchange.prompt, "", f"## {agent_name}", ""]
        for call in exchange.calls:
            depth = call.agent.count("/") + 1 if call.agent else 0
            args = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in call.args.items())
            outcome = (
                f"failed: {call.error}"
                if call.error is not None
                else "→ " + shorten(as_text(call.result), 200)
            )
            lines.append(f"{'  ' * depth}- `{call.name}({args})` {outcome}")
        if exchange.calls:
            lines.append("")
        if exchange.answer:
            lines += [exchange.answer, ""]
        if exchange.status == "cancelled":
            lines += ["*Cancelled: not kept in the conversation.*", ""]
        elif exchange.status == "failed":
            lines += [f"*Failed: {exchange.note}*", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# --- usage and cost --------------------------------------------------------------------


@dataclass
class Spend:
    """Tokens used so far and, when every request could be priced, what they cost."""

    usage: Usage = field(default_factory=Usage)
    cost: Decimal | None = Decimal(0)
    unpriced: str | None = None  # why the cost is unknown
    cancelled: int = 0

    def add(self, usage: Usage | None, responses: Sequence[ModelResponse]) -> Decimal | None:
        """Count a finished turn; returns its cost, or None when it cannot be priced."""
        if usage is None:
            return None
        self.usage = self.usage + usage
        cost, why = price(responses, usage)
        if cost is None:
            self.cost, self.unpriced = None, self.unpriced or why
        elif self.cost is not None:
            self.cost += cost
        return cost

    def report(self) -> list[str]:
        u = self.usage
        lines = [
            f"tokens: {u.total_tokens} ({u.input_tokens} in, {u.output_tokens} out) "
            f"in {u.requests} model request{'s' if u.requests != 1 else ''}"
        ]
        if u.requests == 0:
            lines.append("cost: nothing yet")
        elif self.cost is None:
            lines.append(f"cost: unknown ({self.unpriced})")
        else:
            lines.append(
                f"cost: ${self.cost:.6f} (estimated from the price list bundled with pydantic-ai)"
            )
        if self.cancelled:
            lines.append(f"not counted: {self.cancelled} cancelled answer(s)")
        return lines


def price(responses: Sequence[ModelResponse], usage: Usage) -> tuple[Decimal | None, str]:
    """The cost of a turn's model responses, or None and why it is unknown."""
    if len(responses) < usage.requests:
        return None, "sub-agents and prompt tools made requests that cannot be priced here"
    total = Decimal(0)
    for response in responses:
        try:
            total += response.cost().total_price
        except (LookupError, ValueError, AssertionError):
            return None, f"no price data for {response.model_name or 'the model'}"
    return total, ""


# --- the conversation ------------------------------------------------------------------


class Conversation:
    """An agent, its memory of the last `max_messages` messages, and an optional session
    file holding that memory between runs."""

    def __init__(
        self,
        agent: Agent,
        *,
        max_messages: int,
        session: Path | None = None,
        debug: bool = False,
    ) -> None:
        self.agent = agent
        self.spec: AgentSpec = agent.spec
        self.max_messages = max_messages
        self.session = session
        self.debug = debug
        self.spend = Spend()
        self.transcript: list[Exchange] = []

    def resume(self) -> int:
        """Load the session file, if there is one; returns how many messages it held."""
        if self.session is None or not self.session.exists():
            return 0
        try:
            messages = ModelMessagesTypeAdapter.validate_json(self.session.read_bytes())
        except OSError as exc:
            raise SessionError(f"{self.session}: cannot read the session: {exc}") from None
        except ValueError as exc:
            problem = shorten(str(exc), 160)
            raise SessionError(
                f"{self.session}: not a chat session ({problem}); "
                "delete it or give another file to --session"
            ) from None
        self.agent.history = trim_history(messages, self.max_messages)
        self.transcript = exchanges_from(self.agent.history)
        return len(messages)

    async def ask(self, prompt: str, view: ChatView) -> Outcome:
        """Run one turn, shown on `view` (a failure as one line).

        Cancelling the task running it cancels the turn: the conversation stays as it was."""
        exchange = Exchange(prompt)
        self.transcript.append(exchange)
        before = len(self.agent.history)
        usage: Usage | None = None
        view.turn_started()
        try:
            with _abandoning_threads():
                # an async generator: closing it ends the turn's tasks
                events = cast("AsyncGenerator[Event, None]", self.agent.run(prompt))
                try:
                    async for event in events:
                        exchange.record(event)
                        if isinstance(event, Usage):
                            usage = event
                        view.event(event)
                finally:
                    await events.aclose()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # the cancellation ends here: the session goes on
            exchange.status = "cancelled"
            self.spend.cancelled += 1
            view.turn_cancelled()
            self._save_cassette(view)
            return "cancelled"
        except (ProviderError, TurnError, CassetteError) as exc:
            return self._failed(exchange, view, str(exc))
        except Exception as exc:  # a bug must not end the conversation
            if self.debug:
                traceback.print_exc()
            return self._failed(exchange, view, f"{type(exc).__name__}: {exc}")
        responses = [m for m in self.agent.history[before:] if isinstance(m, ModelResponse)]
        cost = self.spend.add(usage, responses)
        view.turn_finished(usage, f"${cost:.4f}" if cost else None)
        self.agent.history = trim_history(self.agent.history, self.max_messages)
        try:
            self.save_session()
        except SessionError as exc:
            view.error(str(exc))
            return "failed"
        return "answered"

    def reset(self) -> None:
        self.agent.reset()
        self.transcript.append(Exchange("", status="reset"))
        self.save_session()

    def save_session(self) -> None:
        if self.session is None:
            return
        data = ModelMessagesTypeAdapter.dump_json(self.agent.history, indent=2)
        try:
            write_atomically(self.session, data, mode=0o600)
        except OSError as exc:
            raise SessionError(f"{self.session}: cannot save the session: {exc}") from None

    def save_transcript(self, path: Path) -> None:
        write_atomically(path, transcript_markdown(self.spec.name, self.transcript).encode())

    def _failed(self, exchange: Exchange, view: ChatView, message: str) -> Outcome:
        exchange.status, exchange.note = "failed", message
        view.turn_failed(message)
        self._save_cassette(view)
        return "failed"

    def _save_cassette(self, view: ChatView) -> None:
        """A turn that did not finish still keeps the exchanges it recorded."""
        cassette = self.agent.options.cassette
        if cassette is not None:
            try:
                cassette.save()
            except CassetteError as exc:
                view.error(str(exc))


@contextlib.contextmanager
def _abandoning_threads() -> Iterator[None]:
    """A cancelled turn does not wait for a synchronous tool still running in a thread
    (pydantic-ai otherwise waits for it to return); its result is discarded."""
    try:
        from pydantic_ai._utils import abandon_threads_on_cancel
    except ImportError:  # pragma: no cover - a pydantic-ai without it waits for the tool
        yield
        return
    with abandon_threads_on_cancel():
        yield


# --- what the agent has ----------------------------------------------------------------


def model_label(agent: Agent) -> str:
    built = agent.model
    label = f"{built.provider}/{built.name}" if built.name else built.provider
    notes = ["offline"] if built.provider == "test" else []
    own = agent.spec.model
    if agent.options.model is not None and own is not None:
        notes.append(f"instead of {own.provider}/{own.name}" if own.name else "from --model")
    cassette = agent.options.cassette
    if cassette is not None:
        notes.append(f"{'recording to' if cassette.recording else 'replaying'} {cassette.path}")
    return f"{label} ({', '.join(notes)})" if notes else label


def tool_rows(spec: AgentSpec) -> list[tuple[str, str, str]]:
    """(name, kind, description) of each tool the model can call."""
    rows: list[tuple[str, str, str]] = []
    for tool in spec.tools:
        if isinstance(tool, AgentTool):
            continue  # listed with the sub-agents below
        if isinstance(tool, McpTool):
            where = tool.url or tool.command or tool.server or ""
            rows.append((f"{tool.name}_*", "mcp", tool.description or f"tools of {where}"))
        elif isinstance(tool, FunctionTool | TypeScriptTool):
            rows.append((tool.name, tool.type, tool.description or _docstring(spec, tool)))
        elif isinstance(tool, PromptTool | VectorstoreTool):
            rows.append((tool.name, tool.type, tool.description))
    for name, sub in spec.subagents.items():
        described = next(
            (t.description for t in spec.tools if isinstance(t, AgentTool) and t.name == name),
            None,
        )
        rows.append((name, "sub-agent", described or sub.description or ""))
    if spec.skills:
        names = ", ".join(s.name for s in spec.skills)
        rows.append(("load_skill", "skills", f"loads the instructions of: {names}"))
        if any(s.resources for s in spec.skills):
            rows.append(("read_skill_file", "skills", "reads a file of a skill"))
    for builtin in spec.builtins:
        rows.append((builtin.name, "built-in", ""))
    return rows


def _docstring(spec: AgentSpec, tool: FunctionTool | TypeScriptTool) -> str:
    if not isinstance(tool, FunctionTool):
        return ""
    from holodeck.tools.errors import ToolLoadError
    from holodeck.tools.python_modules import load_module

    try:  # already imported when the agent was built
        function = getattr(load_module(spec.root / tool.file), tool.function, None)
    except ToolLoadError:
        return ""
    doc = (getattr(function, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else ""


def banner_rows(conversation: Conversation, resumed: int) -> list[tuple[str, str]]:
    spec = conversation.spec
    kinds = ("sub-agent", "skills")
    tools = [name for name, kind, _ in tool_rows(spec) if kind not in kinds]
    sources = [f"{t.name}: {t.source}" for t in spec.tools if isinstance(t, VectorstoreTool)]
    if not spec.interaction.conversational:
        memory = "off (interaction.conversational is false): each question stands alone"
    else:
        memory = f"last {conversation.max_messages} messages"
        if conversation.session is None:
            memory += ", not saved (--session FILE keeps them)"
        elif resumed:
            memory += f", resumed {resumed} from {conversation.session}"
        else:
            memory += f", saved to {conversation.session}"
    about = [("about", spec.description)] if spec.description else []
    if spec.author:
        about.append(("author", spec.author))
    return [
        *about,
        ("model", model_label(conversation.agent)),
        ("tools", ", ".join(tools) or "none"),
        ("skills", ", ".join(s.name for s in spec.skills) or "none"),
        ("sub-agents", ", ".join(spec.subagents) or "none"),
        ("data", ", ".join(sources) or "none"),
        ("memory", memory),
    ]


# --- slash commands --------------------------------------------------------------------


def run_command(line: str, conversation: Conversation, view: ChatView) -> bool:
    """Do a slash command; True when the session should end."""
    name, _, argument = line.strip().partition(" ")
    name, argument = name.lower(), argument.strip()
    if name in ("/exit", "/quit"):
        return True
    if name == "/help":
        view.notice(HELP)
    elif name == "/tools":
        rows = tool_rows(conversation.spec)
        if not rows:
            view.notice("This agent has no tools.")
        width = max((len(n) for n, _, _ in rows), default=0)
        kind_width = max((len(k) for _, k, _ in rows), default=0)
        for tool, kind, description in rows:
            view.notice(f"  {tool.ljust(width)}  {kind.ljust(kind_width)}  {description}".rstrip())
    elif name == "/usage":
        for text in conversation.spend.report():
            view.notice(text)
    elif name == "/reset":
        try:
            conversation.reset()
        except SessionError as exc:
            view.error(str(exc))
        else:
            view.notice("The conversation is forgotten; the next question starts a new one.")
    elif name == "/save":
        if not argument:
            view.error("/save needs a file name, e.g. /save chat.md")
            return False
        path = Path(argument).expanduser()
        try:
            conversation.save_transcript(path)
        except OSError as exc:
            view.error(f"{path}: cannot write the transcript: {exc.strerror or exc}")
        else:
            view.notice(f"Saved the transcript to {path}")
    else:
        view.error(f"unknown command {name}; /help lists the commands")
    return False


# --- the prompt loop -------------------------------------------------------------------


async def interactive(conversation: Conversation, view: ChatView, output: Any = None) -> None:
    """Read questions until the user leaves; answer each, streaming.

    Ctrl+C while an answer is written cancels it (SIGINT cancels the turn's task); at the
    prompt it clears the line, and on an empty line it says how to leave, or leaves when
    pressed twice in a row."""
    leaving = _Leaving()
    session = _prompt_session(output, leaving)
    loop = asyncio.get_running_loop()
    turn: asyncio.Task[Outcome] | None = None

    def interrupt() -> None:
        if turn is not None and not turn.done():
            turn.cancel()

    loop.add_signal_handler(signal.SIGINT, interrupt)
    try:
        while True:
            try:
                line = await session.prompt_async(handle_sigint=False)
            except KeyboardInterrupt:
                view.dim("(Press Ctrl+C again to leave, or Ctrl+D, or type exit.)")
                continue
            except EOFError:  # Ctrl+D, or Ctrl+C twice
                return
            leaving.armed = False
            text = line.strip()
            if not text:
                continue
            if text.lower() in EXIT_WORDS:
                return
            if text.startswith("/"):
                if run_command(text, conversation, view):
                    return
                continue
            turn = asyncio.create_task(conversation.ask(line, view))
            try:
                with _typing_ahead():
                    await asyncio.wait({turn})
            finally:  # the session itself is being stopped: stop the turn first
                if not turn.done():
                    turn.cancel()
                    await asyncio.wait({turn})
    finally:
        loop.remove_signal_handler(signal.SIGINT)


@contextlib.contextmanager
def _typing_ahead() -> Iterator[None]:
    """While an answer is written, what the user types is kept for the next prompt rather
    than echoed into the answer; Ctrl+C still interrupts (the terminal sends SIGINT)."""
    import sys

    try:
        import termios
    except ImportError:  # not a POSIX terminal
        yield
        return
    try:
        fd = sys.stdin.fileno()
        before = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        yield
        return
    quiet = list(before)
    quiet[0] &= ~termios.ICRNL  # Enter stays Enter for the prompt
    quiet[3] &= ~(termios.ECHO | termios.ICANON)
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, before)


@dataclass
class _Leaving:
    armed: bool = False  # Ctrl+C was pressed on an empty line: once more leaves


def _prompt_session(output: Any, leaving: _Leaving) -> Any:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.styles import Style

    bindings = KeyBindings()

    @bindings.add("escape", "enter")  # Alt+Enter sends the same keys
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("c-c")
    def _interrupt(event: Any) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
            leaving.armed = False
        elif leaving.armed:
            event.app.exit(exception=EOFError, style="class:exiting")
        else:
            leaving.armed = True
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    return PromptSession(
        [("class:prompt", "› ")],
        history=InMemoryHistory(),
        key_bindings=bindings,
        prompt_continuation=lambda width, line, wrapped: "· ".rjust(width),
        style=Style.from_dict({"prompt": "bold ansicyan"}),
        output=output,
    )
