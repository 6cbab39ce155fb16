"""A terminal chat's conversation: a `Session` shown on a `ChatView`, its transcript, the
files attached for the next question, and the `--session` file it is resumed from and
saved to after each turn (each turn holds the file's lock, and first takes in what
another process saved there meanwhile).

A turn that pauses on tool calls needing approval asks the conversation's `approver`
about each (chat asks y/N in the terminal), then goes on with the decisions."""

from __future__ import annotations

import asyncio
import contextlib
import json
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Literal

from holodeck.atomic_write import write_atomically
from holodeck.cli.chat.session_file import SessionFile, SessionFileError
from holodeck.cli.chat.transcript import Exchange, exchanges_from, transcript_markdown
from holodeck.cli.chat.view import ChatView
from holodeck.errors import HoloDeckError, LimitReached
from holodeck.runtime import (
    Agent,
    ApprovalRequired,
    Attachment,
    CassetteError,
    Decision,
    Event,
    ExpectedCall,
    FinalMessage,
    InputRefused,
    Session,
    SessionError,
    Usage,
)
from holodeck.spec.models.agent_spec import AgentSpec

__all__ = ["Conversation", "Outcome", "SessionFileError"]

Outcome = Literal["answered", "cancelled", "failed"]
# asks a person about a call waiting for approval
Approver = Callable[[ApprovalRequired, ChatView], Awaitable[Decision]]
NOT_ASKED = "nobody was asked (stdin is not a terminal); run with --approve-all to allow"


async def deny_unasked(call: ApprovalRequired, view: ChatView) -> Decision:
    """Piped chat's answer: nobody can be asked, so the call is denied."""
    view.decided(call, False, f": {NOT_ASKED}")
    return Decision(False, "Nobody was asked to approve this call: chat's input is not a terminal.")


async def approve_unasked(call: ApprovalRequired, view: ChatView) -> Decision:
    """`--approve-all`: every call is allowed, and said so."""
    view.decided(call, True, " (--approve-all)")
    return Decision(True)


class Conversation:
    """A session with an agent, and the session file (if any) that keeps it between runs."""

    def __init__(
        self,
        agent: Agent,
        *,
        max_messages: int,
        session_file: Path | None = None,
        adopt_session: bool = False,
        debug: bool = False,
        approver: Approver = deny_unasked,
    ) -> None:
        self.session = Session(agent, max_messages=max_messages)
        self.session_file = session_file
        self._file = SessionFile(session_file) if session_file is not None else None
        self.adopt_session = adopt_session  # resume a file another agent saved
        self.debug = debug
        self.transcript: list[Exchange] = []
        self.attached: list[Attachment] = []  # sent with the next question
        self.calls: list[ExpectedCall] = []  # `/call`: what the offline model calls next
        self.approver = approver

    @property
    def agent(self) -> Agent:
        return self.session.agent

    @property
    def spec(self) -> AgentSpec:
        return self.session.agent.spec

    def resume(self) -> int:
        """Load the session file, if there is one; returns how many messages it holds."""
        data = self._file.read() if self._file is not None else None
        if data is None:
            return 0
        self.session = self._saved_session(data)
        self.transcript = exchanges_from(self.session.messages)
        return len(self.session.messages)

    def _saved_session(self, data: bytes) -> Session:
        path = self.session_file
        try:
            saved = Session.from_json(self.agent, data, max_messages=self.session.max_messages)
        except SessionError as exc:
            raise SessionFileError(
                f"{path}: not a chat session ({exc.message})",
                hint="delete it, or give another file to --session",
            ) from None
        raw = json.loads(data)  # read once already: it parses
        owner = raw.get("agent") if isinstance(raw, dict) else None  # a bare list: unknown
        if owner is not None and owner != self.spec.name and not self.adopt_session:
            raise SessionFileError(
                f"{path}: a session of the agent {owner!r}, not of {self.spec.name!r}",
                hint=f"give --session another file, or add --adopt-session to continue "
                f"it with {self.spec.name!r}",
            )
        return saved

    def _catch_up(self) -> None:
        """Take in the turns another process saved to the session file meanwhile."""
        assert self._file is not None
        data = self._file.read() if self._file.changed() else None
        if data is None:
            return
        saved = self._saved_session(data)
        self.session.messages = saved.messages
        self.session.handoffs = saved.handoffs  # who answers, as the other chat left it
        self.session.spend = saved.spend
        self.session.created_at, self.session.updated_at = saved.created_at, saved.updated_at
        self.transcript = exchanges_from(saved.messages)

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
        """Run one turn, shown on `view` (a failure as one line), holding the session
        file's lock, if there is a file.

        Cancelling the task running it cancels the turn: the conversation stays as it was."""
        if self._file is None:
            return await self._turn(prompt, view)
        path = self.session_file

        def waiting() -> None:
            view.notice(f"Waiting: another holodeck chat is answering in {path}")

        try:
            async with self._file.held(waiting):
                self._catch_up()
                return await self._turn(prompt, view)
        except SessionFileError as exc:
            view.error(str(exc))
            return "failed"
        except asyncio.CancelledError:  # while waiting for the lock: no turn was started
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            return "cancelled"

    async def _turn(self, prompt: str, view: ChatView) -> Outcome:
        exchange = Exchange(prompt)
        self.transcript.append(exchange)
        attachments, self.attached = self.attached, []
        calls, self.calls = self.calls, []
        usage: Usage | None = None
        view.turn_started()
        if self.session.pending is not None:  # a saved session's paused turn: not asked now
            names = ", ".join(c.name for c in self.session.pending.calls)
            view.dim(f"The saved session's last turn waited for approval of {names}: dropped.")
            self.session.pending = None
        try:
            with self.agent.options.offline.expecting(calls or None):
                events: AsyncIterator[Event] = self.session.run(prompt, attachments=attachments)
                while True:
                    final: FinalMessage | None = None
                    async for event in events:
                        exchange.record(event)
                        if isinstance(event, Usage):
                            usage = event if usage is None else usage + event
                        elif isinstance(event, FinalMessage):
                            final = event
                        view.event(event)
                    if final is None or not final.pending:
                        break
                    for call in final.pending:  # asked one by one, then the turn goes on
                        decision = await self.approver(call, view)
                        self.session.decide(call.call_id, decision.approve, decision.reason)
                    events = self.session.resume()
        except asyncio.CancelledError:
            self.session.pending = None  # the question is not kept, nor its paused calls
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # the cancellation ends here: the chat goes on
            exchange.status = "cancelled"
            view.turn_cancelled(self.session.interrupted_calls)
            self._save_cassette(view)
            return "cancelled"
        except HoloDeckError as exc:  # said in one line; the conversation goes on
            self.session.pending = None
            if isinstance(exc, LimitReached):  # its messages are not kept; its spend is
                with contextlib.suppress(SessionFileError):
                    self.save_session()
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
        if self._file is None:
            self._forget()
            return
        with self._file.held_now():
            self._forget()
            self.save_session()

    def _forget(self) -> None:
        self.session.reset()
        self.attached, self.calls = [], []
        self.transcript.append(Exchange("", status="reset"))

    def save_session(self) -> None:
        if self._file is not None:
            self._file.write(self.session.to_json(indent=2))

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
