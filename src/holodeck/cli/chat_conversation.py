"""A terminal chat's conversation: a `Session` shown on a `ChatView`, its transcript, the
files attached for the next question, and the `--session` file it is resumed from and
saved to after each turn."""

from __future__ import annotations

import asyncio
import traceback
from pathlib import Path
from typing import Literal

from holodeck.atomic_write import write_atomically
from holodeck.cli.chat_transcript import Exchange, exchanges_from, transcript_markdown
from holodeck.cli.chat_view import ChatView
from holodeck.errors import HoloDeckError
from holodeck.llm.cassette import CassetteError
from holodeck.runtime import Agent, Attachment, InputRefused, Session, SessionError, Usage
from holodeck.spec.agent_spec import AgentSpec

Outcome = Literal["answered", "cancelled", "failed"]


class SessionFileError(SessionError):
    """A session file cannot be read or written."""


class Conversation:
    """A session with an agent, and the session file (if any) that keeps it between runs."""

    def __init__(
        self,
        agent: Agent,
        *,
        max_messages: int,
        session_file: Path | None = None,
        debug: bool = False,
    ) -> None:
        self.session = Session(agent, max_messages=max_messages)
        self.session_file = session_file
        self.debug = debug
        self.transcript: list[Exchange] = []
        self.attached: list[Attachment] = []  # sent with the next question

    @property
    def agent(self) -> Agent:
        return self.session.agent

    @property
    def spec(self) -> AgentSpec:
        return self.session.agent.spec

    def resume(self) -> int:
        """Load the session file, if there is one; returns how many messages it holds."""
        path = self.session_file
        if path is None or not path.exists():
            return 0
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SessionFileError(f"{path}: cannot read the session: {exc}") from None
        try:
            resumed = Session.from_json(self.agent, data, max_messages=self.session.max_messages)
        except SessionError as exc:
            raise SessionFileError(
                f"{path}: not a chat session ({exc.message})",
                hint="delete it, or give another file to --session",
            ) from None
        self.session = resumed
        self.transcript = exchanges_from(resumed.messages)
        return len(resumed.messages)

    def attach(self, path: Path) -> Attachment:
        """Send the file at `path` with the next question; raises InputRefused when the
        agent does not take its kind of input, OSError when it cannot be read."""
        attachment = Attachment.from_path(path)
        allowed = set(self.spec.interaction.input_modalities)
        if attachment.modality not in allowed:
            raise InputRefused(
                f"{self.spec.name} does not accept {attachment.modality} input "
                f"({path.name}); it declares {', '.join(sorted(allowed))}"
            )
        self.attached.append(attachment)
        return attachment

    async def ask(self, prompt: str, view: ChatView) -> Outcome:
        """Run one turn, shown on `view` (a failure as one line).

        Cancelling the task running it cancels the turn: the conversation stays as it was."""
        exchange = Exchange(prompt)
        self.transcript.append(exchange)
        attachments, self.attached = self.attached, []
        usage: Usage | None = None
        view.turn_started()
        try:
            async for event in self.session.run(prompt, attachments=attachments):
                exchange.record(event)
                if isinstance(event, Usage):
                    usage = event
                view.event(event)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # the cancellation ends here: the chat goes on
            exchange.status = "cancelled"
            view.turn_cancelled()
            self._save_cassette(view)
            return "cancelled"
        except HoloDeckError as exc:  # said in one line; the conversation goes on
            return self._failed(exchange, view, str(exc))
        except Exception as exc:  # a bug must not end the conversation
            if self.debug:
                traceback.print_exc()
            return self._failed(exchange, view, f"{type(exc).__name__}: {exc}")
        cost = self.session.spend.last_turn_cost
        view.turn_finished(usage, f"${cost:.4f}" if cost else None)
        try:
            self.save_session()
        except SessionFileError as exc:
            view.error(str(exc))
            return "failed"
        return "answered"

    def reset(self) -> None:
        self.session.reset()
        self.attached = []
        self.transcript.append(Exchange("", status="reset"))
        self.save_session()

    def save_session(self) -> None:
        if self.session_file is None:
            return
        try:  # the conversation may be private: only its owner reads the file
            write_atomically(self.session_file, self.session.to_json(indent=2), mode=0o600)
        except OSError as exc:
            raise SessionFileError(f"{self.session_file}: cannot save the session: {exc}") from None

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
