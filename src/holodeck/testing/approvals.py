"""A test case's answers to tool calls waiting for approval: `approve: [tool, ...]` and
`deny: [tool, ...]`. The runner reads a turn through its pauses: each paused call is
decided as the case says, and the turn goes on until it answers."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import replace

from holodeck.errors import InputError
from holodeck.runtime import ApprovalRequired, Decision, Event, FinalMessage, Session, Usage

Decide = Callable[[ApprovalRequired], Decision]
DENIED_BY_CASE = "The test case denies this tool call."


def case_decisions(approve: list[str] | None, deny: list[str] | None) -> Decide:
    """Approves the calls of tools in `approve`, denies those in `deny`; a call of a tool
    in neither list is an error (the case ends as ERROR, naming it)."""
    approved, denied = set(approve or ()), set(deny or ())

    def decide(call: ApprovalRequired) -> Decision:
        if call.name in approved:
            return Decision(True)
        if call.name in denied:
            return Decision(False, DENIED_BY_CASE)
        raise InputError(
            f"the agent's call of {call.name} waits for approval, and the case neither "
            "approves nor denies it",
            hint=f"add `approve: [{call.name}]` or `deny: [{call.name}]` to the test case",
        )

    return decide


async def through_pauses(
    session: Session, events: AsyncGenerator[Event, None], decide: Decide
) -> AsyncIterator[Event]:
    """The turn's events until it answers: at each pause its calls are decided and the
    turn resumed (the paused `FinalMessage`s are not passed on; the last is the answer,
    with the usage of the whole turn)."""
    used = Usage()
    while True:
        paused: FinalMessage | None = None
        async with contextlib.aclosing(events):  # closing this closes the turn now
            async for event in events:
                if isinstance(event, FinalMessage):
                    used = used + event.usage
                    if event.pending:
                        paused = event
                        continue
                    event = replace(event, usage=used)
                yield event
        if paused is None:
            return
        for call in paused.pending:
            decision = decide(call)
            session.decide(call.call_id, decision.approve, decision.reason)
        events = session.resume(stream_text=False)
