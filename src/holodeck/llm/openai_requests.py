"""Chat completion requests without the OpenAI SDK's second pass over them.

On every call the SDK walks the request body against its TypedDict annotations
(`async_maybe_transform`): 0.7 ms for one message, 12 ms for 21, a quarter of a served
turn's CPU. For chat completion bodies the walk renames and reformats nothing (no
request type under `openai.types.chat` carries an alias or a format); it drops omitted
arguments and turns iterables into lists. `lean_body` does just that, and
`tests/test_openai_requests.py` holds it equal to the SDK's pass on the bodies real turns
send (tools, tool calls and results, images, response formats), so an SDK that starts
transforming these bodies fails the suite rather than a request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

_installed = False


def lean_body(value: Any) -> Any:
    """`value` with omitted arguments (NOT_GIVEN, omit) dropped from its mappings and
    other iterables made lists, at every depth."""
    from openai import NotGiven, Omit

    if isinstance(value, Mapping):
        return {
            key: lean_body(item)
            for key, item in value.items()
            if not isinstance(item, NotGiven | Omit)
        }
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, Iterable):
        return [lean_body(item) for item in value]
    return value


def use_lean_chat_requests() -> None:
    """Let the SDK's chat completions send `lean_body(body)` (idempotent)."""
    global _installed
    if _installed:
        return
    from openai.resources.chat.completions import completions
    from openai.types.chat import completion_create_params as params

    original: Callable[[Any, Any], Awaitable[Any]] = vars(completions)["async_maybe_transform"]
    lean_types = (params.CompletionCreateParamsStreaming, params.CompletionCreateParamsNonStreaming)

    async def transform(data: Any, expected_type: Any) -> Any:
        if expected_type in lean_types and isinstance(data, Mapping):
            return lean_body(data)
        return await original(data, expected_type)

    setattr(completions, "async_maybe_transform", transform)  # noqa: B010 (a private name)
    _installed = True
