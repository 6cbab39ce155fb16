"""One turn of a served conversation: admitted (or refused with 503, or 429 when its
session's queue is full), its session taken from the store and held, a running slot
taken, the agent's events streamed, the session saved, the request logged. The JSON
answer, the Server-Sent Events and the OpenAI-compatible endpoint all read the same
events. A session belongs to the API key that started it: its store key carries the
key's name, so another key's request finds no such session."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

from fastapi import Request

from holodeck.errors import HoloDeckError
from holodeck.observability.names import COST_USD
from holodeck.runtime import (
    Attachment,
    Decision,
    Event,
    FinalMessage,
    GuardrailTriggered,
    HandedOff,
    Session,
    ToolCallFinished,
    Usage,
    Used,
)
from holodeck.server._daily import KeyHold, hold_key_day, turn_most
from holodeck.server._errors import ApiError, from_holodeck_error
from holodeck.server._guards import TurnSlots
from holodeck.server._registry import ServedAgent
from holodeck.server._request_log import RequestRecord
from holodeck.server._state import key_name_of, state_of
from holodeck.server._trace import served_span
from holodeck.server._turn_admission import admit, decide
from holodeck.server._turn_json import (
    call_json,
    call_tree,
    guardrail_json,
    handoff_json,
    jsonable,
    pending_json,
    priced_usage_json,
)

if TYPE_CHECKING:
    from holodeck.runtime import ClientTool, TurnSettings


def session_key(served: ServedAgent, owner: str | None, session_id: str) -> str:
    """Where session `session_id` of key `owner` (None: a server without keys) lives in
    the agent's store. Ownership is in the key itself, so it holds for every process
    sharing the store and across restarts, and another key cannot even wait on its lock."""
    return served.key(session_id if owner is None else f"{owner}/{session_id}")


@dataclass
class ServedTurn:
    """A turn being served: what it did, for the answer and the log."""

    served: ServedAgent
    session_id: str
    request_id: str
    message: str
    endpoint: str
    owner: str | None = None  # the name of the request's API key
    user_id: str | None = None  # a user of the key's, for long-term memory (None: the key)
    started: float = field(default_factory=time.perf_counter)
    calls: list[ToolCallFinished] = field(default_factory=list)
    guardrails: list[GuardrailTriggered] = field(default_factory=list)
    handoffs: list[HandedOff] = field(default_factory=list)
    # the agent answering the session's next message (a handoff's target); "" until the
    # session is held
    answering: str = ""
    final: FinalMessage | None = None
    logged: bool = False
    trace_ids: tuple[str, str] | None = None  # (trace id, span id) when traced
    # a decision on a paused call (POST .../approvals/{call_id}) instead of a message
    decision: tuple[str, Decision] | None = None
    can_pause: bool = True  # False: an endpoint with no way to ask for approval
    # tools the client runs (an AG-UI page's), and the results it sends of their calls
    # (call id -> result) instead of a message
    client_tools: tuple[ClientTool, ...] = ()
    outputs: dict[str, Any] | None = None
    # decisions on calls waiting for approval that the request carries instead of a
    # message (an AG-UI run's `resume`): call id -> decision
    approvals: dict[str, Decision] | None = None
    wait_s: float = 60.0  # how long it waits for its session, or for its key's caps
    settings: TurnSettings | None = None  # the request's own model settings, answer shape
    client_fields: dict[str, Any] = field(default_factory=dict)  # logged (OpenAI's `user`)
    # no new message: the model goes on from the conversation's last request (a client's
    # tool results, on /v1/chat/completions)
    continues: bool = False
    cost: Decimal | None = None  # what the turn's model requests cost; None: unpriced

    @property
    def usage(self) -> Usage:
        return self.final.usage if self.final is not None else Usage()

    def answer_json(self) -> dict[str, Any]:
        final = self.final
        return {
            "response": final.text if final else "",
            "output": jsonable(final.output) if final else None,
            "session_id": self.session_id,
            "agent": self.served.name,
            "answered_by": self.answered_by,
            "handoffs": [handoff_json(h) for h in self.handoffs],
            "tool_calls": call_tree(self.calls),
            "usage": priced_usage_json(self.usage, self.cost),
            "model": final.model if final else None,
            "guardrails": [guardrail_json(hit) for hit in self.guardrails],
            "request_id": self.request_id,
            "pending": [pending_json(c) for c in final.pending] if final else [],
        }

    @property
    def answered_by(self) -> str:
        """The agent that wrote the answer: the served one, or a handoff's target."""
        if self.final is not None and self.final.agent:
            return self.final.agent
        return self.answering or self.served.name

    @property
    def blocked(self) -> bool:
        """Whether a guardrail of the top agent blocked the message or the answer."""
        return any(h.action == "block" and not h.agent for h in self.guardrails)

    def log(self, status: int, error: str | None = None) -> None:
        if self.logged:
            return
        self.logged = True
        record = RequestRecord(
            request_id=self.request_id,
            session_id=self.session_id,
            message=self.message,
            tool_calls=[call_json(c) for c in self.calls],
            response=self.final.text if self.final else None,
            started=self.started,
            status=status,
            error=error,
            endpoint=self.endpoint,
            trace_ids=self.trace_ids if self._log_trace_context() else None,
            key=self.owner,
            model=self.final.model if self.final else None,
            client_fields=self.client_fields,
            cost_usd=self.cost,
        )
        self.served.log.write(record)

    def _log_trace_context(self) -> bool:
        observability = self.served.spec.observability
        return observability is not None and observability.logs.include_trace_context

    def traced(self, ids: tuple[str, str]) -> None:
        self.trace_ids = ids


class Opened:
    """First item of `open_turn`'s stream: admitted, and the session held."""


OPENED = Opened()


def unknown_session(session_id: str) -> ApiError:
    return ApiError(
        404,
        "unknown_session",
        f"no session {session_id!r} (never started, deleted, or expired)",
        hint="start one with POST /v1/chat; its answer carries the session_id",
    )


async def refuse_anothers_session(request: Request, served: ServedAgent, session_id: str) -> None:
    """404 for a session that another key started, as reading it gets: a key continues
    only its own conversations. (An id no key has used starts a new conversation.)"""
    owner = key_name_of(request)
    if owner is None or await served.store.load(session_key(served, owner, session_id)):
        return
    for name, _ in state_of(request).keys.keys:
        if name != owner and await served.store.load(session_key(served, name, session_id)):
            raise unknown_session(session_id)


async def open_turn(
    request: Request,
    turn: ServedTurn,
    *,
    attachments: Sequence[Attachment] = (),
    session: Session | None = None,
    stream_text: bool = True,
) -> AsyncIterator[Event]:
    """The turn's events, once it is admitted and holds its session. `session` runs a
    conversation the request carries whole (the OpenAI-compatible endpoint); otherwise
    the stored session `turn.session_id` is held for the turn and saved after it.

    Refusals (503 overloaded, 409 busy, a store that fails) raise before the first event,
    so a streamed answer still gets its status; failures later end the stream."""
    state = state_of(request)
    request.state.turn = turn  # a refusal rendered later logs in this turn's line
    turn.wait_s = state.options.lock_wait_seconds
    events = _served(turn, state.slots, attachments, session, stream_text)
    first = await anext(events)
    assert first is OPENED
    return cast("AsyncIterator[Event]", events)  # after OPENED come only the turn's events


async def run_through(request: Request, events: AsyncIterator[Event]) -> None:
    """Run a turn whose answer is sent when it ends, cancelled if the client goes away
    first, as a streamed turn is: nobody would read the answer, and the session stays as
    it was before it. (The body has been read: the next message is the disconnect.)"""
    task = asyncio.current_task()
    assert task is not None
    gone = asyncio.Event()

    async def watch() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        gone.set()
        task.cancel()

    watcher = asyncio.create_task(watch(), name="client watch")
    try:
        async for _ in events:
            pass
    except asyncio.CancelledError:
        if gone.is_set() and task.uncancel() == 0:  # our cancel, not the server stopping
            raise ApiError(499, "client_gone", "the client went away before the answer") from None
        raise
    finally:
        watcher.cancel()


async def _served(
    turn: ServedTurn,
    slots: TurnSlots,
    attachments: Sequence[Attachment],
    given: Session | None,
    stream_text: bool,
) -> AsyncGenerator[Event | Opened, None]:
    """The one generator between the route and the session's turn: it admits the turn (a
    running slot; the stored session held, or the one the request carries), says so
    (`OPENED`), runs the session's turn inside the turn's span while holding the key's
    share of its daily caps, keeps what the answer and the log need, and logs the
    request. Closing it closes the session's turn, which cancels the model run."""
    served = turn.served
    key = None if given is not None else session_key(served, turn.owner, turn.session_id)
    try:
        reservation = slots.reserve(key)
    except ApiError as exc:
        turn.log(exc.status, exc.message)
        raise
    try:
        async with contextlib.AsyncExitStack() as held:
            if given is not None:
                await held.enter_async_context(reservation.run())
                session = await held.enter_async_context(given)
                turn.answering = session.answering_agent
            else:
                # the session first, then a slot: a turn waiting for its session's previous
                # turn holds no slot that another session's turn could run in
                assert key is not None
                live = served.live.turn(
                    served.agent, served.store, key, turn.session_id, wait_s=turn.wait_s
                )
                session = await held.enter_async_context(live)
                await held.enter_async_context(reservation.run())
                admit(turn, session)
                turn.answering = session.answering_agent
            yield OPENED
            if decide(turn, session):  # else calls still wait: the turn stays paused
                hold, before = await _hold_key_day(turn, session)
                span = served_span(
                    served.agent.telemetry,
                    turn.endpoint,
                    {
                        "holodeck.request.id": turn.request_id,
                        "gen_ai.conversation.id": turn.session_id,
                    },
                )
                if span is not None:
                    turn.traced(span.ids)
                failed: BaseException | None = None
                events = _session_turn(turn, session, attachments, stream_text, hold)
                try:
                    async with contextlib.aclosing(events):
                        while True:
                            if span is None:
                                event = await anext(events, None)
                            else:
                                with span.current():
                                    event = await anext(events, None)
                            if event is None:
                                break
                            _keep(turn, session, event)
                            if span is not None:
                                span.add(answered_by(event, session))
                            yield event
                except BaseException as exc:
                    failed = exc
                    raise
                finally:  # on every way out (a cap, an error, a client gone): it was spent
                    if span is not None:
                        span.end(failed)
                    if hold is not None:  # shielded: a cancelled turn still gives it back
                        await asyncio.shield(hold.settle(session.spend.used() - before))
    except ApiError as exc:
        turn.log(exc.status, exc.message)
        raise
    except HoloDeckError as exc:
        error = from_holodeck_error(exc)
        turn.log(error.status, error.message)
        raise error from None
    except BaseException as exc:  # a client gone mid-turn (cancelled) is logged as 499
        turn.log(499 if not isinstance(exc, Exception) else 500, type(exc).__name__)
        raise
    finally:
        reservation.release()
    turn.log(200)


async def _hold_key_day(turn: ServedTurn, session: Session) -> tuple[KeyHold | None, Used]:
    """The key's share of its daily caps, held before anything is spent, so turns running
    at once (in this process or any sharing the store) cannot overrun the day's caps; and
    what the session had used before the turn."""
    limits = turn.served.spec.limits
    if limits is None or limits.key_daily is None:
        return None, Used()
    before = session.spend.used()  # pricing is not free: only when a cap needs it
    most = turn_most(limits, before, turn.served.agent.most_turn_requests)
    hold = await hold_key_day(
        turn.served.store, turn.served.name, turn.owner, limits.key_daily, most, turn.wait_s
    )
    return hold, before


def _session_turn(
    turn: ServedTurn,
    session: Session,
    attachments: Sequence[Attachment],
    stream_text: bool,
    hold: KeyHold | None,
) -> AsyncGenerator[Event, None]:
    """The session's turn the request asks for: a new message, or the paused turn resumed."""
    key_used = hold.used if hold is not None else None
    if turn.decision is None and turn.outputs is None and turn.approvals is None:
        return session.run(
            None if turn.continues else turn.message,
            attachments=attachments,
            stream_text=stream_text,
            key_used=key_used,
            client_tools=turn.client_tools,
            settings=turn.settings,
        )
    return session.resume(
        stream_text=stream_text, key_used=key_used, client_tools=turn.client_tools
    )


def _keep(turn: ServedTurn, session: Session, event: Event) -> None:
    """What the answer and the request log need of `event`."""
    if isinstance(event, ToolCallFinished):
        turn.calls.append(event)
    elif isinstance(event, GuardrailTriggered):
        turn.guardrails.append(event)
        if event.side == "input" and event.text is not None and not event.agent:
            turn.message = event.text  # the request log keeps it redacted
    elif isinstance(event, HandedOff):
        turn.handoffs.append(event)
        turn.answering = event.to_agent
    elif isinstance(event, FinalMessage):
        turn.final = event
        if event.usage.requests:  # counted by the session before it came
            turn.cost = session.spend.last_turn_cost
        if event.pending and not turn.can_pause:
            raise _cannot_pause(turn, event)


def _cannot_pause(turn: ServedTurn, final: FinalMessage) -> ApiError:
    names = ", ".join(c.name for c in final.pending)
    return ApiError(
        409,
        "approval_required",
        f"the turn waits for approval of {names}, which {turn.endpoint} cannot ask for",
        hint="use POST /v1/chat: its answer lists the calls waiting (`pending`); a stored "
        "session (`holodeck.session_id`) keeps the turn paused: decide each call with "
        "POST /v1/sessions/{session_id}/approvals/{call_id}",
    )


def answered_by(event: object, session: Session | None = None) -> dict[str, Any]:
    """The span attributes an event adds: which model gave the final answer, and what
    the turn cost when its model is priced."""
    found: dict[str, Any] = {}
    if isinstance(event, FinalMessage) and event.model:
        found["gen_ai.response.model"] = event.model
    if isinstance(event, FinalMessage) and session is not None and event.usage.requests:
        cost = session.spend.last_turn_cost
        if cost is not None:
            found[COST_USD] = float(cost)
    return found
