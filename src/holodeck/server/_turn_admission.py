"""What a served turn's request may ask of its session, checked once the session is held
and before anything is streamed (`admit`), then applied (`decide`): a new message (refused
while a turn waits), a decision on a paused call, or a page's results of its own tools'
calls and its approvals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck.errors import ApprovalPending
from holodeck.memory import served_user
from holodeck.runtime import FinalMessage, Session
from holodeck.server._errors import ApiError, from_holodeck_error

if TYPE_CHECKING:
    from holodeck.server._turns import ServedTurn


def admit(turn: ServedTurn, session: Session) -> None:
    """Refuse, before anything is streamed, a message to a session paused on calls to
    approve, and a decision on a call that is not pending or was decided already."""
    pending = session.pending
    if turn.outputs is not None or turn.approvals is not None:
        _admit_outputs(turn, session)
        return
    if turn.decision is None:
        if pending is not None and all(c.client for c in pending.undecided):
            names = ", ".join(f"{c.name} ({c.call_id})" for c in pending.undecided)
            raise from_holodeck_error(
                ApprovalPending(
                    f"session {turn.session_id!r} waits for the result of {names}",
                    hint="end `messages` with a `tool` message answering each call",
                )
            )
        if pending is not None:
            names = ", ".join(f"{c.name} ({c.call_id})" for c in pending.undecided)
            raise from_holodeck_error(
                ApprovalPending(
                    f"session {turn.session_id!r} waits for approval of {names}",
                    hint=f"decide each with POST /v1/sessions/{turn.session_id}/approvals/"
                    '{call_id} and {"approve": true|false}',
                )
            )
        return
    call_id = turn.decision[0]
    if pending is None or pending.call(call_id) is None:
        waiting = ", ".join(c.call_id for c in pending.undecided) if pending else ""
        raise ApiError(
            404,
            "unknown_call",
            f"session {turn.session_id!r} has no call {call_id!r} waiting for approval",
            hint=f"the calls waiting: {waiting}" if waiting else "nothing waits for approval",
        )
    if call_id in pending.decisions:
        raise ApiError(
            409,
            "already_decided",
            f"call {call_id!r} of session {turn.session_id!r} is decided already",
            hint="each call is decided once",
        )


def _admit_outputs(turn: ServedTurn, session: Session) -> None:
    """Refuse results of calls the session's paused turn does not wait for, and
    decisions on calls that do not wait for approval."""
    pending = session.pending
    approvable = {c.call_id for c in pending.undecided if not c.client} if pending else set()
    for call_id in turn.approvals or {}:
        if call_id not in approvable:
            raise ApiError(
                409,
                "unknown_call",
                f"session {turn.session_id!r} has no call {call_id!r} waiting for approval",
                hint=f"the calls waiting: {', '.join(sorted(approvable))}"
                if approvable
                else "no tool call waits for approval: send the user's message",
            )
    waiting = {c.call_id for c in pending.undecided if c.client} if pending else set()
    for call_id in turn.outputs or {}:
        if call_id not in waiting:
            raise ApiError(
                409,
                "unknown_call",
                f"session {turn.session_id!r} has no call {call_id!r} waiting for its result",
                hint=f"the calls waiting: {', '.join(sorted(waiting))}"
                if waiting
                else "no tool call of the page waits: send the user's message",
            )


def decide(turn: ServedTurn, session: Session) -> bool:
    """Apply the request to the held session; False when calls still wait for a decision
    (the turn stays paused and `turn.final` says on what), True when a turn runs."""
    session.user = served_user(turn.owner, turn.user_id)  # whose memories it reaches
    if turn.outputs is not None or turn.approvals is not None:
        done = False
        for call_id, output in (turn.outputs or {}).items():
            done = session.decide(call_id, True, output=output)
        for call_id, approval in (turn.approvals or {}).items():
            done = session.decide(call_id, approval.approve, approval.reason)
        if not done:
            assert session.pending is not None  # others wait: the turn stays paused
            turn.final = FinalMessage("", pending=session.pending.undecided)
            return False
    if turn.decision is not None:
        call_id, decision = turn.decision
        if not session.decide(call_id, decision.approve, decision.reason):
            assert session.pending is not None  # others wait: the turn stays paused
            turn.final = FinalMessage("", pending=session.pending.undecided)
            return False
    return True
