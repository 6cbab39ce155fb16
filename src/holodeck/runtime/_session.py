"""`Session`: one conversation with an agent.

    >>> import asyncio
    >>> from holodeck import Agent, RunOptions, load_agent
    >>> async def main() -> str:
    ...     async with Agent(load_agent("examples/weather"), RunOptions(model="test")) as agent:
    ...         async with agent.session() as session:
    ...             await session.answer("What's the weather in Oslo? /call get_weather")
    ...             used = session.spend.usage.requests
    ...             return f"{len(session.messages)} messages, {used} requests"
    >>> asyncio.run(main())  # a question, the tool call and its result, the answer
    '4 messages, 2 requests'

A session owns the conversation (its messages, trimmed to `memory.max_messages` without
ever parting a tool call from its result, or with `memory.compaction` summarised before a
turn that would near the model's context window; the tokens and cost so far) and what
the agent starts for this conversation alone (MCP servers with `scope: session`), which
it stops on `aclose()`. The agent's shared servers are not the session's: thousands of
sessions of one agent use one connection. A session is cheap: opening one allocates a few
small objects. Its turns run one at a time through the `TurnRunner` it owns.

A turn that calls a tool needing approval (`approval:`) ends paused: its final message
lists the calls (`pending`), the session keeps them (`pending`, saved with it), and
`decide()` then `resume()` run the rest of the turn. A new message is refused
(`ApprovalPending`) until then.

`to_json()` / `Session.from_json()` carry a session between processes (a chat's
`--session` file, a `SessionStore`). A turn that is interrupted or fails leaves the
conversation as it was before the turn. Turns of one session object run one at a time.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from holodeck.errors import SessionError
from holodeck.runtime._approval import Decision, Pending
from holodeck.runtime._compaction import bounded_history
from holodeck.runtime._events import Event, FinalMessage, ToolCallStarted, final_message
from holodeck.runtime._handoffs import chain, valid_stack
from holodeck.runtime._limits import Used
from holodeck.runtime._saved_session import FORMAT, VERSION, parse_saved
from holodeck.runtime._scope import SessionScope
from holodeck.runtime._spend import Spend
from holodeck.runtime._turn_runner import TurnRunner

if TYPE_CHECKING:
    from pathlib import Path

    from holodeck.runtime._agent import Agent
    from holodeck.runtime._attachments import Attachment
    from holodeck.runtime._client_tools import ClientTool
    from holodeck.runtime._turn_settings import TurnSettings


class Session:
    __slots__ = (
        "_runner",
        "_scope",
        "agent",
        "created_at",
        "handoffs",
        "id",
        "interrupted_calls",
        "max_messages",
        "messages",
        "pending",
        "spend",
        "updated_at",
    )

    def __init__(
        self,
        agent: Agent,
        session_id: str | None = None,
        *,
        max_messages: int | None = None,
        messages: Sequence[ModelMessage] = (),
        spend: Spend | None = None,
        created_at: float | None = None,
        workspace: Path | None = None,
    ) -> None:
        """`max_messages` defaults to the agent's `memory.max_messages`; `workspace` is
        the folder the agent's workspace tools act in (default: as the agent's hosting
        says)."""
        self.agent = agent
        self.id = session_id or uuid.uuid4().hex
        self.max_messages = max_messages or agent.spec.memory.max_messages
        self.messages = bounded_history(agent.spec, messages, self.max_messages)
        self.spend = spend or Spend()
        self.created_at = self.updated_at = created_at or time.time()
        self._scope = SessionScope(self.id, workspace)
        self._runner = TurnRunner(agent, self._scope, self)  # its turns, one at a time
        # the tool calls the last turn had started when it was cancelled, in the order made
        self.interrupted_calls: tuple[ToolCallStarted, ...] = ()
        self.pending: Pending | None = None  # a turn paused on calls to approve
        # who answers: the handoffs taken from the agent to the one answering (none: it)
        self.handoffs: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"<Session {self.id} of {self.agent.spec.name}: {len(self.messages)} messages>"

    # -- lifecycle

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the servers this session started (idempotent); the conversation stays."""
        await self._scope.aclose()

    @property
    def user(self) -> str | None:
        """Whose long-term memories this conversation reaches (None: the local user's);
        a server sets it from the request's key and `user_id`."""
        return self._scope.user

    @user.setter
    def user(self, user: str | None) -> None:
        self._scope.user = user

    @property
    def answering_agent(self) -> str:
        """The name of the agent that answers the next message: the session's agent,
        or the one a handoff transferred the conversation to."""
        return chain(self.agent.spec, self.handoffs)[-1].name

    # -- turns

    def run(
        self,
        prompt: str | None,
        *,
        attachments: Sequence[Attachment] = (),
        stream_text: bool = True,
        key_used: Used | None = None,
        client_tools: Sequence[ClientTool] = (),
        settings: TurnSettings | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Stream one turn's events; the last is a `FinalMessage`. With
        `stream_text=False` the answer comes whole in the final message (no `TextDelta`),
        which costs less per model request.

        The conversation takes the turn in when it finishes; closing the iterator early
        (or cancelling the task reading it) cancels the turn and leaves it as it was.
        `interrupted_calls` then holds the tool calls it had started (whether or not their
        `ToolCallStarted` was read): each ended without a `ToolCallFinished`.

        The agent's `limits.session` caps count this session's spend; `key_used` is what
        the API key has used today, for `limits.key_daily` (the server passes it). A turn
        a cap stops raises `LimitReached`; what it used is counted, its messages are not
        kept. `client_tools` are tools the caller runs: a call to one pauses the turn
        (an `ApprovalRequired` with `client`), and `decide()` takes its result.
        `settings` are this turn's own model settings and answer shape. A `prompt` of
        None continues from the conversation's last request (a client's tool results)."""
        return self._runner.turn(
            prompt,
            attachments=attachments,
            stream_text=stream_text,
            key_used=key_used,
            client_tools=client_tools,
            settings=settings,
        )

    def decide(
        self, call_id: str, approve: bool, reason: str | None = None, *, output: Any = None
    ) -> bool:
        """Record a decision on a paused call (for a client's call, `output` is its
        result); True when every call is decided (then `resume()` runs the turn on).
        Raises KeyError for a call that is not pending and ValueError for one decided
        already."""
        pending = self.pending
        if pending is None or pending.call(call_id) is None:
            raise KeyError(call_id)
        if call_id in pending.decisions:
            raise ValueError(f"call {call_id} is decided already")
        pending.decisions[call_id] = Decision(approve, reason, output)
        self.updated_at = time.time()
        return not pending.undecided

    def resume(
        self,
        *,
        stream_text: bool = True,
        key_used: Used | None = None,
        client_tools: Sequence[ClientTool] = (),
    ) -> AsyncGenerator[Event, None]:
        """Stream the rest of the paused turn, once `decide()` has every call's decision:
        approved calls run, denied ones tell the model why. It may pause again."""
        return self._runner.turn(
            None,
            stream_text=stream_text,
            key_used=key_used,
            client_tools=client_tools,
            resuming=True,
        )

    async def answer(self, prompt: str, **kwargs: Any) -> FinalMessage:
        """Run a turn and return only its final message."""
        return await final_message(self.run(prompt, **kwargs))

    def reset(self) -> None:
        """Forget the conversation (what was used so far stays counted); the session's
        agent answers again."""
        self.messages = []
        self.pending = None
        self.handoffs = ()
        self.updated_at = time.time()

    # -- saving

    def to_json(self, *, indent: int | None = None) -> bytes:
        """The session as JSON: its id, agent, times, usage and messages."""
        head = {
            "format": FORMAT,
            "version": VERSION,
            "id": self.id,
            "agent": self.agent.spec.name,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "spend": self.spend.to_dict(),
        }
        if self.handoffs:
            head["handoffs"] = list(self.handoffs)
        if indent is None:  # a server saves it after every turn: the messages, the bulk of
            # it, go to JSON in pydantic-core in one step (half the time of Python's json)
            saved = json.dumps(head)[:-1].encode()
            saved += b', "messages": ' + ModelMessagesTypeAdapter.dump_json(self.messages)
            if self.pending is not None:
                saved += b', "pending": ' + json.dumps(self.pending.to_dict()).encode()
            return saved + b"}"
        messages = ModelMessagesTypeAdapter.dump_python(self.messages, mode="json")
        body: dict[str, Any] = {**head, "messages": messages}
        if self.pending is not None:
            body["pending"] = self.pending.to_dict()
        return json.dumps(body, indent=indent).encode()

    @classmethod
    def from_json(
        cls,
        agent: Agent,
        data: bytes | str,
        *,
        session_id: str | None = None,
        max_messages: int | None = None,
    ) -> Session:
        """A session saved by `to_json()`, continued with `agent`. A bare list of
        messages (the earlier chat session file) is read too. Raises `SessionError`."""
        raw, messages = parse_saved(data)
        try:
            spend = Spend.from_dict(raw.get("spend") or {})
        except (ValueError, TypeError, ArithmeticError) as exc:
            problem = str(exc).splitlines()[0][:160]
            raise SessionError(f"the session's usage is damaged ({problem})") from None
        created = raw.get("created_at")
        session = cls(
            agent,
            session_id or raw.get("id"),
            max_messages=max_messages,
            messages=messages,
            spend=spend,
            created_at=float(created) if isinstance(created, int | float) else None,
        )
        if raw.get("pending") is not None:
            session.pending = Pending.from_dict(raw["pending"])
        handoffs = raw.get("handoffs")
        if isinstance(handoffs, list):  # those the definition still has
            names = [str(name) for name in handoffs]
            session.handoffs = valid_stack(agent.spec, names)
        updated = raw.get("updated_at")
        if isinstance(updated, int | float):
            session.updated_at = float(updated)
        return session
