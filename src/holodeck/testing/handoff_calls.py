"""A case's handoffs as its turns record them: each `HandedOff` is kept as a handoff of
the turn and as the transfer tool's call (`transfer_to_billing`, `transfer_back_to_triage`),
so `expected_tools` and `tool_order` check transfers as they check any other call."""

from __future__ import annotations

from holodeck.runtime import HandedOff
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.handoffs import back_tool, transfer_tool
from holodeck.testing.results import HandoffRecord, ToolCallRecord


def handoff_record(event: HandedOff) -> HandoffRecord:
    return HandoffRecord(
        from_agent=event.from_agent, to_agent=event.to_agent, reason=event.reason, back=event.back
    )


def transfer_call(root: AgentSpec, event: HandedOff) -> ToolCallRecord:
    """The call of the transfer tool that made `event`, as the model made it. It has no
    result: what a transfer returns is no retrieval context for the metrics."""
    name = back_tool(event.to_agent) if event.back else _forward_tool(root, event)
    args = {"reason": event.reason} if event.reason else {}
    return ToolCallRecord(name=name, args=args)


def _forward_tool(root: AgentSpec, event: HandedOff) -> str:
    """`transfer_to_<handoff>`: the handoff's name, which may differ from its agent's."""
    seen: list[AgentSpec] = [root]
    while seen:
        spec = seen.pop()
        for handoff in spec.handoffs:
            if spec.name == event.from_agent and handoff.agent.name == event.to_agent:
                return handoff.tool
            seen.append(handoff.agent)
    return transfer_tool(event.to_agent)
