"""The chat's prompt loop: read a question (prompt_toolkit, with history and multi-line
input), answer it streaming, and let Ctrl+C cancel an answer or leave."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from holodeck.cli.chat.commands import run_command
from holodeck.cli.chat.conversation import Approver, Conversation, Outcome
from holodeck.cli.chat.view import ChatView
from holodeck.runtime import ApprovalRequired, Decision

EXIT_WORDS = ("exit", "quit")
KEYS_HINT = (
    "Enter sends · Esc then Enter (or Alt+Enter) adds a line · /help lists commands · "
    "exit, quit or Ctrl+D leaves"
)


def asking_approval(output: Any = None) -> Approver:
    """Asks `Allow TOOL(args)? [y/N]` about a call waiting for approval: `y` or `yes`
    allows it; anything else (Enter, Ctrl+C, Ctrl+D) denies it."""
    from prompt_toolkit import PromptSession

    question: PromptSession[str] = PromptSession(output=output)

    async def ask(call: ApprovalRequired, view: ChatView) -> Decision:
        try:
            answer = await question.prompt_async(view.approval_question(call))
        except (KeyboardInterrupt, EOFError):
            answer = ""
        approved = answer.strip().lower() in ("y", "yes")
        view.decided(call, approved)
        return Decision(approved, None if approved else "The user denied this tool call.")

    return ask


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
                line = await session.prompt_async(prompt_of(conversation), handle_sigint=False)
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


def prompt_of(conversation: Conversation) -> list[tuple[str, str]]:
    """`› `, led by the agent answering when a handoff passed the conversation on."""
    answering = conversation.session.answering_agent
    if answering == conversation.spec.name:
        return [("class:prompt", "› ")]
    return [("class:agent", f"{answering} "), ("class:prompt", "› ")]


@contextlib.contextmanager
def _typing_ahead() -> Iterator[None]:
    """While an answer is written, what the user types is kept for the next prompt rather
    than echoed into the answer; Ctrl+C still interrupts (the terminal sends SIGINT)."""
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
        style=Style.from_dict({"prompt": "bold ansicyan", "agent": "ansimagenta"}),
        output=output,
    )
