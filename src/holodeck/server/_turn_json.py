"""What a served turn looks like on the wire: its attachments taken in, and its tool
calls, guardrail hits, pending approvals, handoffs, compactions and usage as JSON, the
same for every route."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pydantic_core import to_jsonable_python

from holodeck.runtime import (
    ApprovalRequired,
    Attachment,
    GuardrailTriggered,
    HandedOff,
    HistoryCompacted,
    ToolCallFinished,
    Usage,
)
from holodeck.server._errors import ApiError
from holodeck.server._wire import AttachmentIn


def attachments_from(items: Sequence[AttachmentIn]) -> list[Attachment]:
    files = []
    for index, item in enumerate(items):
        try:
            data = base64.b64decode(item.data, validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(
                422,
                "invalid_request",
                f"attachments.{index}.data: not base64",
                hint="send the file's bytes base64-encoded",
            ) from None
        files.append(Attachment(data, item.media_type, item.name))
    return files


def jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=str)


def call_json(call: ToolCallFinished) -> dict[str, Any]:
    return {
        "id": call.call_id,
        "name": call.name,
        "args": jsonable(call.args),
        "result": jsonable(call.result),
        "error": call.error,
        "duration_ms": round(call.duration_ms, 1),
        "agent": call.agent,
    }


def call_tree(calls: Sequence[ToolCallFinished]) -> list[dict[str, Any]]:
    """Calls with those a sub-agent made nested under the call that asked it."""
    nodes = {call.call_id: {**call_json(call), "calls": []} for call in calls}
    roots: list[dict[str, Any]] = []
    for call in calls:
        parent = nodes.get(call.parent_call_id or "")
        (parent["calls"] if parent is not None else roots).append(nodes[call.call_id])
    return roots


def guardrail_json(hit: GuardrailTriggered) -> dict[str, Any]:
    return {
        "guardrail": hit.guardrail,
        "side": hit.side,
        "action": hit.action,
        "kind": hit.kind,
        "message": hit.message,
        "reason": hit.reason,
        "agent": hit.agent,
    }


def handoff_json(event: HandedOff) -> dict[str, Any]:
    """The conversation passing from one agent to another (`back`: returned to the agent
    that had handed it over)."""
    return {
        "from_agent": event.from_agent,
        "to_agent": event.to_agent,
        "reason": event.reason,
        "back": event.back,
        "tool": event.tool,
    }


def compacted_json(event: HistoryCompacted) -> dict[str, Any]:
    """Older turns replaced by a summary before the turn (estimated token counts)."""
    return {
        "summarised": event.summarised,
        "kept": event.kept,
        "tokens_before": event.tokens_before,
        "tokens_after": event.tokens_after,
        "usage": usage_json(event.usage),
    }


def pending_json(call: ApprovalRequired) -> dict[str, Any]:
    return {"id": call.call_id, "name": call.name, "args": jsonable(call.args), "agent": call.agent}


def usage_json(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "requests": usage.requests,
    }


def priced_usage_json(usage: Usage, cost: Decimal | None) -> dict[str, Any]:
    """`usage_json` and `cost_usd`: US dollars, or null when the model has no price."""
    return {**usage_json(usage), "cost_usd": None if cost is None else float(cost)}
