"""A chat completions request's `messages` as the conversation the agent is given: the
prompt (the last message, the user's) with its files, and the history before it, text,
images and tool calls alike. An assistant's `tool_calls` and the `tool` messages answering
them are the history's calls and results, in their order.

A conversation may also end with `tool` messages: the results of the last assistant
message's calls, which a client sends to have the model go on from them (no prompt).
Every `tool` message must answer a call made before it, and every call be answered
before the conversation goes on; anything else is a 400 naming the message, since a
model provider would refuse the history (and pydantic-ai would quietly repair it)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from holodeck.runtime import Attachment, Entry, Message, messages_of
from holodeck.server._errors import ApiError


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None
    image_url: dict[str, Any] | None = None


class CalledFunction(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    arguments: str = "{}"


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    type: Literal["function"] = "function"
    function: CalledFunction


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None
    tool_calls: list[ToolCall] | None = None  # an assistant's
    tool_call_id: str | None = None  # a `tool` message's: the call it answers


@dataclass
class Conversation:
    """`prompt` is None when the conversation ends with tool results to go on from."""

    prompt: str | None
    attachments: list[Attachment]
    history: list[Message]


def conversation(messages: list[ChatMessage], accepts: Collection[str]) -> Conversation:
    """`accepts`: the agent's input modalities, which images earlier in the history must
    fit as the last message's do (the runtime checks those)."""
    last = messages[-1]
    if last.role == "tool":
        return Conversation(None, [], _history(messages, accepts))
    if last.role != "user":
        raise ApiError(
            400,
            "invalid_request",
            f"messages: the last message is from `{last.role}`; it must be the user's, "
            "or `tool` results of the last assistant message's calls",
            hint="end `messages` with the user's question",
            param="messages",
        )
    text, attachments = _content(last, len(messages) - 1)
    if not text.strip():
        raise ApiError(
            400, "invalid_request", "messages: the last message has no text", param="messages"
        )
    return Conversation(text, attachments, _history(messages[:-1], accepts))


def _history(messages: list[ChatMessage], accepts: Collection[str]) -> list[Message]:
    entries: list[Entry] = []
    waiting: dict[str, str] = {}  # call id -> tool name: the calls not answered yet
    asked_at = 0  # the index of the assistant message that made them
    number = -1  # the message each entry belongs to: results in a row make one
    for index, message in enumerate(messages):
        if message.role == "tool":
            call_id = message.tool_call_id or ""
            if call_id not in waiting:
                raise _misplaced_result(index, call_id)
            if not entries or entries[-1].role != "tool_result":
                number += 1
            text = _tool_text(message, index)
            entries.append(Entry("tool_result", text, number, waiting.pop(call_id), call_id))
            continue
        if waiting:
            raise _unanswered(asked_at, waiting)
        number += 1
        text, files = _content(message, index)
        if files and message.role != "user":
            raise ApiError(
                400,
                "unsupported",
                f"messages.{index}: only the user's messages may hold images",
                hint="send the image in a user message",
                param=f"messages.{index}",
            )
        for file in files:
            if file.modality not in accepts:
                raise ApiError(
                    400,
                    "unsupported",
                    f"messages.{index}: the agent does not accept {file.modality} input; it "
                    f"declares {', '.join(sorted(accepts))}",
                    hint=f"add `{file.modality}` to interaction.modalities.input, or leave "
                    "the image out of the history",
                    param=f"messages.{index}",
                )
        if message.role in ("system", "developer"):
            entries.append(Entry("system", text, number))
        elif message.role == "user":
            entries.append(Entry("user", [text, *files] if files else text, number))
        else:
            if (message.model_extra or {}).get("function_call"):
                raise ApiError(
                    400,
                    "unsupported",
                    f"messages.{index}: `function_call` (the deprecated form) is not supported",
                    hint="send the call in `tool_calls`, and its result as a `tool` message",
                    param=f"messages.{index}",
                )
            entries.append(Entry("assistant", text, number))
            for position, call in enumerate(message.tool_calls or ()):
                args = _arguments(call, index, position)
                entries.append(Entry("tool_call", args, number, call.function.name, call.id))
                waiting[call.id] = call.function.name
            asked_at = index
    if waiting:
        raise _unanswered(asked_at, waiting)
    return messages_of(entries)


def _arguments(call: ToolCall, index: int, position: int) -> dict[str, Any]:
    try:
        args = json.loads(call.function.arguments or "{}")
    except json.JSONDecodeError:
        args = None
    if not isinstance(args, dict):
        raise ApiError(
            400,
            "invalid_request",
            f"messages.{index}.tool_calls.{position}: `function.arguments` is not a JSON object",
            hint="send the arguments as a JSON object encoded in a string",
            param=f"messages.{index}",
        )
    return args


def _misplaced_result(index: int, call_id: str) -> ApiError:
    return ApiError(
        400,
        "invalid_request",
        f"messages.{index}: a `tool` message for call {call_id!r}, which no assistant "
        "message before it made, or which is answered already",
        hint="put each `tool` message right after the assistant message whose `tool_calls` "
        "has its `tool_call_id`, once per call",
        param="messages",
    )


def _unanswered(index: int, waiting: dict[str, str]) -> ApiError:
    calls = ", ".join(f"{name} ({call_id})" for call_id, name in waiting.items())
    return ApiError(
        400,
        "invalid_request",
        f"messages.{index}: the assistant's calls {calls} have no `tool` message answering them",
        hint="follow the assistant message with a `tool` message per call "
        '({"role": "tool", "tool_call_id": ..., "content": ...})',
        param="messages",
    )


def _tool_text(message: ChatMessage, index: int) -> str:
    text, files = _content(message, index)
    if files:
        raise ApiError(
            400,
            "unsupported",
            f"messages.{index}: a `tool` message's content is text; images are not supported",
            hint="send the tool's result as text",
            param=f"messages.{index}",
        )
    return text


def _content(message: ChatMessage, index: int) -> tuple[str, list[Attachment]]:
    if message.content is None:
        return "", []
    if isinstance(message.content, str):
        return message.content, []
    texts, files = [], []
    for part in message.content:
        if part.type == "text" and part.text is not None:
            texts.append(part.text)
        elif part.type == "image_url" and part.image_url is not None:
            files.append(_data_url(str(part.image_url.get("url", "")), index))
        else:
            raise ApiError(
                400,
                "unsupported",
                f"messages.{index}: content of type `{part.type}` is not supported",
                hint="send text parts and images as data: URLs",
                param=f"messages.{index}",
            )
    return "\n".join(texts), files


def _data_url(url: str, index: int) -> Attachment:
    head, _, data = url.partition(",")
    if not head.startswith("data:") or not head.endswith(";base64"):
        raise ApiError(
            400,
            "unsupported",
            f"messages.{index}: images must be data: URLs (base64); this server fetches nothing",
            param=f"messages.{index}",
        )
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(
            400,
            "invalid_request",
            f"messages.{index}: the image is not base64",
            param=f"messages.{index}",
        ) from None
    return Attachment(raw, head[len("data:") : -len(";base64")] or "application/octet-stream")
