"""Calls waiting for a person's approval, as AG-UI 1.0 interrupts: a run that pauses on
them ends with RUN_FINISHED whose `outcome` is `{"type": "interrupt", "interrupts": [...]}`,
one interrupt per call (its id is the call's id, `reason` "tool_approval"), and the next
run answers them in `resume`: `{"interruptId", "status": "resolved", "payload":
{"approve": true|false, "reason"?}}`, or `"status": "cancelled"`, which denies the call.

The pinned `@ag-ui/client` keeps the interrupts (`agent.pendingInterrupts`), refuses a
next run that leaves one unanswered, and builds the `resume` entries
(`buildResumeArray`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from holodeck.runtime import ApprovalRequired, Decision
from holodeck.server._errors import ApiError

if TYPE_CHECKING:
    from ag_ui.core import Interrupt, RunAgentInput

REASON = "tool_approval"
CANCELLED = "the user dismissed the request for approval"
# what a page answers with: the form an interrupt's `responseSchema` describes
DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "description": "Run the call (true) or not."},
        "reason": {"type": "string", "description": "Why not: the model is told."},
    },
    "required": ["approve"],
    "additionalProperties": False,
}
_HINT = (
    'answer each interrupt with {"interruptId": ..., "status": "resolved", '
    '"payload": {"approve": true|false, "reason": "..."}}'
)


def interrupts_of(pending: Sequence[ApprovalRequired]) -> list[Interrupt]:
    """An interrupt for each call of the agent's own tools waiting for approval (a call
    of a page's tool waits for its result, which a `tool` message carries)."""
    from ag_ui.core import Interrupt

    return [
        Interrupt(
            id=call.call_id,
            reason=REASON,
            message=f"{call.name} waits for your approval",
            tool_call_id=call.call_id,
            response_schema=DECISION_SCHEMA,
        )
        for call in pending
        if not call.client
    ]


def approvals_of(run_input: RunAgentInput) -> dict[str, Decision] | None:
    """The decisions the input's `resume` carries (call id -> decision); None without
    one. 422 for an entry that does not say what to decide."""
    if not run_input.resume:
        return None
    decisions: dict[str, Decision] = {}
    for index, entry in enumerate(run_input.resume):
        where = f"resume.{index}"
        if entry.interrupt_id in decisions:
            raise ApiError(
                422,
                "invalid_request",
                f"{where}.interruptId: {entry.interrupt_id!r} is answered twice",
                hint="answer each interrupt once",
            )
        if entry.status == "cancelled":
            decisions[entry.interrupt_id] = Decision(False, CANCELLED)
            continue
        decisions[entry.interrupt_id] = _decision(where, entry.payload)
    return decisions


def _decision(where: str, payload: Any) -> Decision:
    if not isinstance(payload, dict) or not isinstance(payload.get("approve"), bool):
        raise ApiError(
            422,
            "invalid_request",
            f'{where}.payload: an object with "approve": true or false',
            hint=_HINT,
        )
    unknown = sorted(set(payload) - {"approve", "reason"})
    reason = payload.get("reason")
    if unknown or (reason is not None and not isinstance(reason, str)):
        problem = f"unknown key {unknown[0]!r}" if unknown else '"reason" is not a string'
        raise ApiError(422, "invalid_request", f"{where}.payload: {problem}", hint=_HINT)
    return Decision(payload["approve"], reason or None)
