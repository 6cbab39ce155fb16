"""What a chat completion request may ask of an agent. An agent's model settings, output
shape and tools are those of its definition: a request that asks for something else
(another temperature, `stop` sequences, a schema the agent does not answer in, its own
tool-call history) is refused with 400 naming the field, never silently ignored."""

from __future__ import annotations

from typing import Any

from holodeck.server._errors import ApiError

# request field -> the agent's model setting it must equal (the agent's applies)
_SAMPLING = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_tokens",
    "max_completion_tokens": "max_tokens",
    "max_output_tokens": "max_tokens",  # the Responses API's name
}
# fields with no counterpart in an agent's definition: refused whatever their value
_NOT_SUPPORTED = ("stop", "seed", "logit_bias", "logprobs", "top_logprobs")
_NO_EFFECT: tuple[Any, ...] = (None, False, [], {})


def check_fields(extra: dict[str, Any], settings: dict[str, Any], agent: str) -> None:
    """Refuse client tools, and sampling fields the agent's `model:` block does not set
    to the same value (a client repeating the agent's own setting is fine)."""
    for name in ("tools", "functions"):
        if extra.get(name):
            raise ApiError(
                400,
                "unsupported",
                f"`{name}`: an agent's tools are those of its definition",
                hint="remove `tools` from the request; the agent calls its own tools",
                param=name,
            )
    for name in _NOT_SUPPORTED:
        if extra.get(name) not in _NO_EFFECT:
            raise ApiError(
                400,
                "unsupported",
                f"`{name}` is not supported: agent {agent}'s answers are not cut or seeded",
                hint=f"remove `{name}` from the request",
                param=name,
            )
    for name, setting in _SAMPLING.items():
        asked = extra.get(name)
        if asked is None or asked == settings.get(setting):
            continue
        own = settings.get(setting)
        said = f"sets {setting}: {own}" if own is not None else f"leaves {setting} to the model"
        raise ApiError(
            400,
            "unsupported",
            f"`{name}`: {asked} is not agent {agent}'s; its agent.yaml {said}",
            hint=f"remove `{name}`, or send the agent's own, or set `model.{setting}` "
            "in its agent.yaml",
            param=name,
        )


def check_response_format(asked: Any, own: dict[str, Any] | None, agent: str) -> None:
    """A `response_format` is honoured when the agent answers in that shape: any JSON
    object for `json_object`, the same schema for `json_schema` (titles and
    descriptions aside). Anything else is refused: the answer could not fit."""
    if asked is None:
        return
    kind = asked.get("type") if isinstance(asked, dict) else None
    if kind == "text" and own is None:
        return
    if kind not in ("text", "json_object", "json_schema"):
        raise ApiError(
            400,
            "invalid_request",
            f"response_format: unknown type {kind!r}",
            hint="use `text`, `json_object` or `json_schema`",
            param="response_format",
        )
    if own is None:
        raise ApiError(
            400,
            "unsupported",
            f"response_format: agent {agent} answers in free text (its agent.yaml has no "
            "`response_format`)",
            hint="remove `response_format`, or give the agent a `response_format` schema",
            param="response_format",
        )
    if kind == "text":
        raise ApiError(
            400,
            "unsupported",
            f"response_format: agent {agent} answers in JSON (its agent.yaml's "
            "`response_format`), not free text",
            hint="remove `response_format`, or ask for `json_schema` with the agent's schema",
            param="response_format",
        )
    if kind == "json_schema":
        schema = (asked.get("json_schema") or {}).get("schema")
        if _shape(schema) != _shape(own):
            raise ApiError(
                400,
                "unsupported",
                f"response_format.json_schema: agent {agent} answers only in the schema of "
                "its agent.yaml's `response_format`, and this one differs",
                hint="send the agent's own schema, or change its `response_format`",
                param="response_format",
            )


def _shape(schema: Any) -> Any:
    """A schema without what does not change which answers fit it."""
    if isinstance(schema, dict):
        return {k: _shape(v) for k, v in schema.items() if k not in ("title", "description")}
    if isinstance(schema, list):
        return [_shape(v) for v in schema]
    return schema


def check_history(messages: list[Any]) -> None:
    """The client's own tool-call exchanges cannot be replayed to an agent whose tools
    are its own: refused, naming the message, rather than dropped."""
    for index, message in enumerate(messages):
        extra = message.model_extra or {}
        if message.role == "tool" or extra.get("tool_calls") or extra.get("function_call"):
            what = "a `tool` message" if message.role == "tool" else "assistant `tool_calls`"
            raise ApiError(
                400,
                "unsupported",
                f"messages.{index}: {what} cannot be part of the history; an agent's tool "
                "calls are its own and run on the server",
                hint="send the conversation's text only (user and assistant messages), "
                "or continue a stored session with holodeck.session_id",
                param=f"messages.{index}",
            )
