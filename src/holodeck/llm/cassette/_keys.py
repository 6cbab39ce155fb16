"""Request keys and summaries: what decides a model's answer to a request, hashed (without
what differs between two runs making the same request), and a line a person recognises."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    RetryPromptPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition
from pydantic_core import to_jsonable_python

# Settings that change how a request travels, not what the model answers.
_TRANSPORT_SETTINGS = frozenset(
    {"timeout", "request_timeout", "first_event_timeout", "max_retries", "extra_headers"}
)
# Message fields that differ between two runs making the same request.
_VOLATILE_PART_FIELDS = frozenset(
    {"timestamp", "tool_call_id", "id", "provider_name", "provider_details", "metadata"}
)
_SUMMARY_WIDTH = 120


def request_key(
    messages: Sequence[ModelMessage],
    model_settings: Mapping[str, Any] | None,
    parameters: ModelRequestParameters,
) -> str:
    """A stable hash of what decides a model's answer to this request."""
    dumped = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    output = parameters.output_object
    payload = {
        "messages": [_canonical_message(m) for m in dumped],
        "tools": [_tool(t) for t in parameters.function_tools],
        "output": {
            "schema": _jsonable(output) if output is not None else None,
            "tools": [_tool(t) for t in parameters.output_tools],
        },
        "native_tools": [_jsonable(t) for t in parameters.native_tools],
        "settings": {
            name: value
            for name, value in (model_settings or {}).items()
            if name not in _TRANSPORT_SETTINGS and not name.endswith("_headers")
        },
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def request_summary(
    messages: Sequence[ModelMessage], parameters: ModelRequestParameters
) -> dict[str, Any]:
    """What a person needs to recognise a request: the user's words, where the turn is,
    and the tools on offer."""
    summary: dict[str, Any] = {"user": _last_user_text(messages)}
    last = messages[-1] if messages else None
    if isinstance(last, ModelRequest):
        steps = [_step(p) for p in last.parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
        if steps:
            summary["after"] = ", ".join(steps)
    summary["tools"] = [t.name for t in parameters.function_tools]
    return summary


def _describe(summary: Mapping[str, Any], key: str) -> str:
    words = [f"user {_shorten(str(summary.get('user', '')), 60)!r}"]
    if summary.get("after"):
        words.append(f"after {_shorten(str(summary['after']), 60)}")
    tools = summary.get("tools") or []
    words.append(f"tools {', '.join(tools)}" if tools else "no tools")
    words.append(f"key {key}")
    return "; ".join(words)


def _last_user_text(messages: Sequence[ModelMessage]) -> str:
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in reversed(message.parts):
            if isinstance(part, UserPromptPart):
                if isinstance(part.content, str):
                    return _shorten(part.content, _SUMMARY_WIDTH)
                texts = [c for c in part.content if isinstance(c, str)]
                others = len(part.content) - len(texts)
                text = " ".join(texts) + (f" [+{others} attachment(s)]" if others else "")
                return _shorten(text, _SUMMARY_WIDTH)
    return ""


def _step(part: ToolReturnPart | RetryPromptPart) -> str:
    kind = "retry" if isinstance(part, RetryPromptPart) else "result"
    return f"{kind} of {part.tool_name}" if part.tool_name else kind


def _shorten(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _canonical_message(message: dict[str, Any]) -> dict[str, Any]:
    kind = message.get("kind")
    out: dict[str, Any] = {
        "kind": kind,
        "parts": [_canonical_part(p) for p in message.get("parts") or []],
    }
    if kind == "request" and message.get("instructions"):
        out["instructions"] = message["instructions"]
    return out


def _canonical_part(part: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in part.items() if k not in _VOLATILE_PART_FIELDS}
    if isinstance(out.get("args"), str):
        with contextlib.suppress(ValueError):
            out["args"] = json.loads(out["args"])  # '{"a": 1}' and '{"a":1}' are one request
    return out


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters_json_schema,
        "strict": tool.strict,
        "kind": tool.kind,
    }


def _jsonable(value: Any) -> Any:

    return to_jsonable_python(value, fallback=repr)
