"""The `test` provider: an offline, deterministic model for smoke runs and CI.

Each turn it first calls tools — the test case's expected tools when the runner
names them, otherwise every tool the agent has — with arguments generated to fit
each tool's JSON schema. Then it answers from what the tools returned. It makes
no network call and needs no key, so `holodeck test --model test` exercises the
whole pipeline of any agent.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from contextvars import ContextVar

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

MODEL_NAME = "holodeck-test"
_EXPECTED: ContextVar[tuple[str, ...] | None] = ContextVar("holodeck_test_expected", default=None)


@contextlib.contextmanager
def expecting(tools: Sequence[str] | None) -> Iterator[None]:
    """Within this block the test model calls `tools` instead of every tool."""
    token = _EXPECTED.set(tuple(tools) if tools is not None else None)
    try:
        yield
    finally:
        _EXPECTED.reset(token)


def offline_test_model() -> FunctionModel:
    return FunctionModel(_respond, stream_function=_stream, model_name=MODEL_NAME)


_ARGS = TestModel(seed=0)  # used only for its schema-driven argument generator


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
            return [_call(tool, n) for n, tool in enumerate(chosen)]
    if info.output_tools:
        return [_call(info.output_tools[0], 0)]
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


def _choose(tools: dict[str, ToolDefinition]) -> list[ToolDefinition]:
    expected = _EXPECTED.get()
    if expected is None:
        return list(tools.values())
    return [tools[name] for name in expected if name in tools]


def _call(tool: ToolDefinition, index: int) -> ToolCallPart:
    return ToolCallPart(tool.name, _ARGS.gen_tool_args(tool), tool_call_id=f"test-call-{index}")


def _answer(turn: list[ModelMessage]) -> str:
    results = [
        p
        for m in turn
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) and p.outcome == "success"
    ]
    if results:
        # the same serialisation a real provider would receive
        lines = [f"{p.tool_name}: {p.model_response_str()}" for p in results]
        return "From the tools:\n" + "\n".join(lines)
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
