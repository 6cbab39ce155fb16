"""What a request to the OpenAI routes may ask of an agent. Sampling fields, `stop`,
`seed`, `parallel_tool_calls`, `tool_choice: none` and an answer's format become the
turn's own settings (`TurnSettings`), passed to the model for this turn only. What
cannot be honoured (client tools, a forced tool call, a setting the agent's model does
not take, log probabilities) is refused with 400 naming the field, never ignored."""

from __future__ import annotations

import json
from typing import Any

from holodeck.runtime import TurnSettings
from holodeck.server._errors import ApiError
from holodeck.server._registry import ServedAgent

# fields with nothing here to honour them: refused whatever their value
_NOT_SUPPORTED = ("logit_bias", "logprobs", "top_logprobs")
_NO_EFFECT: tuple[Any, ...] = (None, False, [], {})
# the values that ask a model for nothing: taken by a model that has no such setting
_NEUTRAL: dict[str, Any] = {"presence_penalty": 0, "frequency_penalty": 0, "top_p": 1}
# identifiers that change nothing in the answer (OpenAI keeps them for abuse checks)
_IDENTIFIERS = ("safety_identifier", "prompt_cache_key")


def refuse_client_tools(extra: dict[str, Any]) -> None:
    """An agent's tools are those of its definition: a request's own are refused."""
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
                f"`{name}` is not supported: answers come without token probabilities",
                hint=f"remove `{name}` from the request",
                param=name,
            )


def refuse_unknown(extra: dict[str, Any], known: dict[str, tuple[Any, ...]], route: str) -> None:
    """Fields this route does not read: accepted only with a value that asks for nothing
    (`known` lists those values per field), else 400 naming the field."""
    for name, value in extra.items():
        if name in _IDENTIFIERS or (name in known and value in known[name]):
            continue
        said = (
            f"`{name}`: {json.dumps(value)} is not supported"
            if name in known
            else f"`{name}` is not supported by this server's {route}"
        )
        raise ApiError(
            400, "unsupported", said, hint=f"remove `{name}` from the request", param=name
        )


def turn_settings(served: ServedAgent, asked: dict[str, tuple[str, Any]]) -> TurnSettings | None:
    """The turn's settings from `asked` (TurnSettings field -> (request field, value));
    None when the request asks for nothing of its own. A setting the agent's model
    cannot take is refused, naming the request's field."""
    values: dict[str, Any] = {}
    params: dict[str, str] = {}
    for name, (param, value) in asked.items():
        if value is None:
            continue
        params[name] = param
        if name == "stop":
            value = (value,) if isinstance(value, str) else tuple(value)
        elif name == "tool_choice":
            value = _tool_choice(value, param)
        elif name == "output":
            value, values["output_name"] = _output(value, served, param)
        if value is not None:
            values[name] = value
    if values.get("output") is None:
        values.pop("output_name", None)
    while True:
        if not values:
            return None
        settings = TurnSettings(**values)
        refused = settings.refused(served.agent)
        if refused is None or values[refused] != _NEUTRAL.get(refused):
            break
        del values[refused]  # a default a client sends asks nothing of a model without it
    if refused is not None:
        param = params[refused]
        provider = served.agent.model.provider
        raise ApiError(
            400,
            "unsupported",
            f"`{param}` cannot be honoured: agent {served.name}'s model ({provider}) "
            f"does not take it",
            hint=f"remove `{param}` from the request",
            param=param,
        )
    return settings


def _tool_choice(value: Any, param: str) -> str | None:
    """`auto` is every turn's way; `none` offers no tools this turn. A forced call
    (`required`, or a named function) cannot be: the agent must be free to answer."""
    if value == "auto":
        return None
    if value == "none":
        return "none"
    forced = "required" if value == "required" else "a named function"
    raise ApiError(
        400,
        "unsupported",
        f"`{param}`: {forced} is not supported; a turn cannot force a tool call and still "
        "let the agent answer",
        hint=f"send `{param}: auto` (the agent decides) or `none` (no tools this turn)",
        param=param,
    )


def _output(asked: Any, served: ServedAgent, param: str) -> tuple[Any, str]:
    """The turn's answer shape for a `response_format` (chat completions' form), and
    its name: None keeps the agent's own (`response_format` in its agent.yaml)."""
    own = served.agent.spec.response_format
    kind = asked.get("type") if isinstance(asked, dict) else None
    if kind == "text":
        return (None if own is None else "text"), "answer"
    if kind == "json_object":  # an agent with a schema answers in a JSON object already
        return (None if own is not None else "json"), "answer"
    if kind != "json_schema":
        raise ApiError(
            400,
            "invalid_request",
            f"{param}: unknown type {kind!r}",
            hint="use `text`, `json_object` or `json_schema`",
            param=param,
        )
    spec = asked.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    if not isinstance(schema, dict):
        raise ApiError(
            400,
            "invalid_request",
            f"{param}: `json_schema.schema` must be a JSON Schema object",
            hint='send {"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}}',
            param=param,
        )
    if own is not None and _shape(schema) == _shape(own):
        return None, "answer"
    name = spec.get("name") if isinstance(spec, dict) else None
    return schema, name if isinstance(name, str) and name else "answer"


def _shape(schema: Any) -> Any:
    """A schema without what does not change which answers fit it."""
    if isinstance(schema, dict):
        return {k: _shape(v) for k, v in schema.items() if k not in ("title", "description")}
    if isinstance(schema, list):
        return [_shape(v) for v in schema]
    return schema
