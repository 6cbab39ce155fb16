"""A case's handoffs as its turns record them: each `HandedOff` is kept as a handoff of
the turn and as the transfer tool's call (`transfer_to_billing`, `transfer_back_to_triage`),
so `expected_tools` and `tool_order` check transfers as they check any other call."""

from __future__ import annotations

from holodeck.runtime import HandedOff
from holodeck.testing.results import HandoffRecord, ToolCallRecord


def handoff_record(event: HandedOff) -> HandoffRecord:
    return HandoffRecord(
        from_agent=event.from_agent, to_agent=event.to_agent, reason=event.reason, back=event.back
    )


def transfer_call(event: HandedOff) -> ToolCallRecord:
    """The call of the transfer tool that made `event`, as the model made it. It has no
    result: what a transfer returns is no retrieval context for the metrics."""
    args = {"reason": event.reason} if event.reason else {}
    return ToolCallRecord(name=event.tool, args=args)
