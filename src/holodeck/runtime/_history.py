"""Conversation memory: keep the last messages of a conversation without breaking it.

A conversation is a list of pydantic-ai messages: requests (the user's prompt, or the
results of tool calls) and responses (text, or tool calls). Providers refuse a history
that starts with a tool result, or that has a tool call without its result, so the
oldest messages cannot simply be sliced off. `trim_history` drops them in whole pieces:

- it keeps the longest tail of at most `max_messages` messages that starts where the user
  spoke (a request with a prompt and no tool results);
- when even the latest turn is longer than that (a turn with many tool rounds), it keeps
  that turn's prompt and drops the turn's oldest tool rounds — each a response that calls
  tools together with the request holding their results — until the rest fits.

Instructions are not part of the kept messages: pydantic-ai sends the agent's instructions
with every request, so nothing the agent was told is lost.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    ToolReturnPart,
    UserPromptPart,
)


def trim_history(messages: Sequence[ModelMessage], max_messages: int) -> list[ModelMessage]:
    """The conversation `messages` cut to at most `max_messages` messages.

    The result never starts with a tool result or a response, and keeps every tool call
    with its result. A question and its answer are two messages, so `max_messages`
    below 2 keeps nothing once the conversation is longer than that.
    """
    if max_messages < 1:
        raise ValueError("max_messages must be at least 1")
    if len(messages) <= max_messages:
        return list(messages)
    starts = [i for i, message in enumerate(messages) if starts_turn(message)]
    for start in starts:
        if start >= len(messages) - max_messages:
            return list(messages[start:])
    if not starts or max_messages < 2:
        return []
    # The latest turn alone is too long: keep its prompt, then its tail from a response
    # that follows a request (so every kept call keeps its results, and every result its call).
    opening = starts[-1]
    for cut in range(len(messages) - max_messages + 1, len(messages)):
        if (
            cut > opening
            and isinstance(messages[cut], ModelResponse)
            and isinstance(messages[cut - 1], ModelRequest)
        ):
            return [messages[opening], *messages[cut:]]
    return []


def starts_turn(message: ModelMessage) -> bool:
    """Whether a conversation may begin with `message`: a request where the user speaks,
    answering no earlier tool call or response."""
    if not isinstance(message, ModelRequest):
        return False
    answers = any(
        isinstance(part, ToolReturnPart | RetryPromptPart | RetryFeedbackPart)
        for part in message.parts
    )
    return not answers and any(isinstance(part, UserPromptPart) for part in message.parts)
