"""A conversation's messages as plain entries, and plain turns as messages: what the
surfaces (chat transcripts, the server's session and OpenAI routes) read and write, so
they need not know the model library's message classes.

    >>> from holodeck.runtime import entries_of, messages_from
    >>> history = messages_from([("user", "Hi"), ("assistant", "Hello!")])
    >>> [(e.role, e.content) for e in entries_of(history)]
    [('user', 'Hi'), ('assistant', 'Hello!')]

A history with tool calls is made from entries (`messages_of`), each part numbered by
the message it belongs to, as `entries_of` gives them:

    >>> from holodeck.runtime import Entry, messages_of
    >>> history = messages_of([
    ...     Entry("user", "Weather?", 0),
    ...     Entry("tool_call", {"city": "Oslo"}, 1, "lookup", "c1"),
    ...     Entry("tool_result", "sunny", 2, "lookup", "c1"),
    ... ])
    >>> [(e.role, e.content) for e in entries_of(history)][1:]
    [('tool_call', {'city': 'Oslo'}), ('tool_result', 'sunny')]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from holodeck.runtime._attachments import Attachment
from holodeck.runtime._history import starts_turn

# A stored message of a conversation (`Session.messages`), for type hints outside the runtime.
Message = ModelMessage
Role = Literal["system", "user", "assistant", "tool_call", "tool_result"]


@dataclass(frozen=True)
class Entry:
    """One part of a stored message, in the order the conversation had them.

    `content`: the text (a user's may be a list holding attachments too), a tool call's
    arguments (a dict), or what a tool returned. `message` numbers the message the part
    belongs to; `opens_turn` marks a user's prompt that began a turn."""

    role: Role
    content: Any
    message: int
    name: str = ""  # the tool's, for tool_call and tool_result
    call_id: str = ""  # pairs a tool_result with its tool_call
    opens_turn: bool = False


def entries_of(messages: Sequence[ModelMessage]) -> list[Entry]:
    """The parts of `messages` people read: prompts, answers, tool calls and results
    (retries, thinking and the like are left out)."""
    entries: list[Entry] = []
    for index, message in enumerate(messages):
        if isinstance(message, ModelRequest):
            opens = starts_turn(message)
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    entries.append(Entry("user", part.content, index, opens_turn=opens))
                elif isinstance(part, SystemPromptPart):
                    entries.append(Entry("system", part.content, index))
                elif isinstance(part, ToolReturnPart):
                    entries.append(
                        Entry("tool_result", part.content, index, part.tool_name, part.tool_call_id)
                    )
            continue
        for reply in message.parts:
            if isinstance(reply, TextPart):
                entries.append(Entry("assistant", reply.content, index))
            elif isinstance(reply, ToolCallPart):
                args = reply.args_as_dict()
                entries.append(Entry("tool_call", args, index, reply.tool_name, reply.tool_call_id))
    return entries


def messages_of(entries: Iterable[Entry]) -> list[ModelMessage]:
    """The conversation `entries` make (`entries_of` read back): entries in a row with
    the same `message` number are one message; user, system and tool results are
    requests, assistant text and tool calls are responses. An assistant's empty text
    adds nothing."""
    messages: list[ModelMessage] = []
    number: int | None = None
    for entry in entries:
        part = _part(entry)
        if part is None:
            continue
        last = messages[-1] if messages and entry.message == number else None
        if isinstance(part, TextPart | ToolCallPart):
            if isinstance(last, ModelResponse):
                last.parts = [*last.parts, part]
            else:
                messages.append(ModelResponse(parts=[part]))
        elif isinstance(last, ModelRequest):
            last.parts = [*last.parts, part]
        else:
            messages.append(ModelRequest(parts=[part]))
        number = entry.message
    return messages


def _part(
    entry: Entry,
) -> SystemPromptPart | UserPromptPart | ToolReturnPart | TextPart | ToolCallPart | None:
    if entry.role == "system":
        return SystemPromptPart(content=entry.content)
    if entry.role == "user":
        return UserPromptPart(content=_user_content(entry.content))
    if entry.role == "assistant":
        return TextPart(content=entry.content) if entry.content else None
    if entry.role == "tool_call":
        return ToolCallPart(entry.name, entry.content, entry.call_id)
    return ToolReturnPart(entry.name, entry.content, entry.call_id)


def _user_content(content: Any) -> Any:
    # a client's history may hold files as Attachments; the model takes them as binary parts
    if not isinstance(content, list):
        return content
    return [
        BinaryContent(item.data, media_type=item.media_type)
        if isinstance(item, Attachment)
        else item
        for item in content
    ]


def messages_from(turns: Iterable[tuple[str, str]]) -> list[ModelMessage]:
    """A history a client keeps itself — (role, text) with roles `system` (or
    `developer`), `user` and `assistant` — as a conversation's messages. Other roles,
    and an assistant's empty text, add nothing."""
    messages: list[ModelMessage] = []
    for role, text in turns:
        if role in ("system", "developer"):
            messages.append(ModelRequest(parts=[SystemPromptPart(content=text)]))
        elif role == "user":
            messages.append(ModelRequest(parts=[UserPromptPart(content=text)]))
        elif role == "assistant" and text:
            messages.append(ModelResponse(parts=[TextPart(content=text)]))
    return messages
