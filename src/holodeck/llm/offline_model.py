"""The `test` provider: an offline, deterministic model for smoke runs and CI.

Each turn it first calls tools — the test case's expected tools when the test runner
scripts them (`expecting`), otherwise every tool the agent has — with arguments
generated to fit each tool's JSON schema. Then it answers from what the tools returned. It makes
no network call and needs no key, so `holodeck test --model test` exercises the
whole pipeline of any agent.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition

from holodeck.llm.offline_user import USER_TOOL, next_move

MODEL_NAME = "holodeck-test"

# A tool to call, by name, or by name with argument values to use (a test case's
# `expected_tools: [{name: get_weather, args: {city: Paris}}]`).
ExpectedCall = str | tuple[str, dict[str, Any]]


@dataclass
class _Script:
    calls: tuple[tuple[str, dict[str, Any]], ...]
    used: bool = False  # the turn's first choice took it: later agents call every tool


# Tasks copy their context when created, so the turn's tasks (and a sub-agent's, inside a
# tool call) see the script set by the code that started the turn, and share its `used`.
_SCRIPT: ContextVar[_Script | None] = ContextVar("holodeck_test_script", default=None)


@contextlib.contextmanager
def expecting(tools: Sequence[ExpectedCall] | None) -> Iterator[None]:
    """Within this block the test model's first choice of tools is `tools` instead of
    every tool: the turn started in the block calls them. The test runner wraps each
    case's turn in it; a sub-agent called by that turn makes its own choice (every tool
    it has), as it would outside a test."""
    script = None
    if tools is not None:
        calls = tuple((t, {}) if isinstance(t, str) else (t[0], dict(t[1])) for t in tools)
        script = _Script(calls)
    token = _SCRIPT.set(script)
    try:
        yield
    finally:
        _SCRIPT.reset(token)


def offline_test_model() -> FunctionModel:
    return FunctionModel(_respond, stream_function=_stream, model_name=MODEL_NAME)


_ARGS = TestModel(seed=0)  # used only for its schema-driven argument generator
# Tool metadata marking a search tool whose `query` the offline model fills with the prompt.
SEARCH_BY_PROMPT = "holodeck_search_by_prompt"


def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=_parts(messages, info), model_name=MODEL_NAME)


async def _stream(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    parts = _parts(messages, info)
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    if calls:
        yield {
            i: DeltaToolCall(p.tool_name, json.dumps(p.args), tool_call_id=p.tool_call_id)
            for i, p in enumerate(calls)
        }
        return
    for part in parts:
        if isinstance(part, TextPart):
            words = part.content.split(" ")  # stream word by word, like a real model
            yield words[0]
            for word in words[1:]:
                yield " " + word


def _parts(messages: list[ModelMessage], info: AgentInfo) -> list[TextPart | ToolCallPart]:
    turn = _current_turn(messages)
    retried = _retried_tools(messages)
    tools = {t.name: t for t in info.function_tools}
    if retried:
        return [_call(tools[name], n) for n, name in enumerate(retried) if name in tools]
    called = any(isinstance(m, ModelResponse) and m.tool_calls for m in turn)
    if not called and tools:
        chosen = _choose(tools)
        if chosen:
            prompt = _prompt(turn)
            return [_call(tool, n, values, prompt) for n, (tool, values) in enumerate(chosen)]
    if info.output_tools and info.output_tools[0].name == USER_TOOL:  # a simulated user
        return [ToolCallPart(USER_TOOL, next_move(), tool_call_id="test-user-0")]
    if info.output_tools:
        return [_best(_call(info.output_tools[0], 0), info.output_tools[0])]
    return [TextPart(_answer(turn))]


def _current_turn(messages: list[ModelMessage]) -> list[ModelMessage]:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ModelRequest) and any(
            isinstance(p, UserPromptPart) for p in message.parts
        ):
            return messages[index:]
    return messages


def _retried_tools(messages: list[ModelMessage]) -> list[str]:
    last = messages[-1] if messages else None
    if not isinstance(last, ModelRequest):
        return []
    names: list[str] = []
    for part in last.parts:
        retried = isinstance(part, ToolReturnPart) and part.outcome == "retried"
        name = part.tool_name if isinstance(part, RetryPromptPart | ToolReturnPart) else None
        if name and (retried or isinstance(part, RetryPromptPart)):
            names.append(name)
    return names


def _choose(tools: dict[str, ToolDefinition]) -> list[tuple[ToolDefinition, dict[str, Any]]]:
    script = _SCRIPT.get()
    if script is None or script.used:
        return [(tool, {}) for tool in tools.values()]
    script.used = True
    return [(tools[name], values) for name, values in script.calls if name in tools]


def _prompt(turn: list[ModelMessage]) -> str | None:
    """The user's words that opened this turn (text only)."""
    for message in turn:
        for part in message.parts if isinstance(message, ModelRequest) else ():
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return part.content
    return None


def _call(
    tool: ToolDefinition,
    index: int,
    values: dict[str, Any] | None = None,
    prompt: str | None = None,
) -> ToolCallPart:
    args = _ARGS.gen_tool_args(tool)
    if prompt and isinstance(args, dict) and (tool.metadata or {}).get(SEARCH_BY_PROMPT):
        # a search tool is asked what the user asked, so an offline run retrieves something
        args["query"] = prompt
    if values and isinstance(args, dict):
        args.update(values)  # the values a test case expects, so the tool gets real input
    return ToolCallPart(tool.name, args, tool_call_id=f"test-call-{index}")


def _readable(part: ToolReturnPart) -> str:
    """A tool result as plain words (`city Paris, temperature 21 °C`), so text metrics
    compare it with a ground truth the way they would compare a model's sentence."""

    try:
        data = json.loads(part.model_response_str())
    except ValueError:
        return part.model_response_str()
    return _words(data)


def _words(data: Any) -> str:
    if isinstance(data, dict):
        return ", ".join(f"{key} {_words(value)}" for key, value in data.items())
    if isinstance(data, list):
        return "; ".join(_words(item) for item in data)
    return str(data)


def _best(call: ToolCallPart, tool: ToolDefinition) -> ToolCallPart:
    """Bounded numbers at their maximum: as a judge, the test model gives the top score
    (the test runner marks such verdicts not judged: they check the pipeline, not answers)."""
    properties = tool.parameters_json_schema.get("properties", {})
    args = dict(call.args) if isinstance(call.args, dict) else call.args
    if isinstance(args, dict):
        for name, schema in properties.items():
            if isinstance(schema, dict) and "maximum" in schema:
                args[name] = schema["maximum"]
    return ToolCallPart(call.tool_name, args, tool_call_id=call.tool_call_id)


def _answer(turn: list[ModelMessage]) -> str:
    results = [
        p
        for m in turn
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) and p.outcome == "success"
    ]
    if len(results) == 1:
        return _readable(results[0]) or f"{results[0].tool_name} returned nothing"
    if results:
        return "\n".join(f"{p.tool_name}: {_readable(p)}" for p in results)
    prompt = next(
        (
            p.content
            for m in turn
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart)
        ),
        "",
    )
    text = (
        prompt
        if isinstance(prompt, str)
        else " ".join(str(c) for c in prompt if isinstance(c, str))
    )
    return f"Test answer to: {text}"
