"""The `test` provider: an offline, deterministic model for smoke runs and CI.

It calls a tool only when told to, never on its own:

- a test case's `expected_tools` and chat's `/call TOOL` command call the tools they
  name, whatever they do: the test runner and chat say them with `expecting` on the run's
  `OfflineScript`, which the model is built with;
- a line of the user's message that says `/call TOOL` or `/call TOOL {"city": "Oslo"}`
  calls TOOL (`/call *`: every tool): that is how a smoke run of a deployed agent gets a
  tool called. A tool whose MCP annotations say it is destructive (`destructiveHint:
  true`) is not called this way: only a test case or chat's `/call` command can call it.

A sub-agent called during a turn calls no tool unless its own prompt says `/call`. Each
call's arguments are generated to fit the tool's JSON schema, then filled from the user's
words where a rule fits (`offline_args`: a `city` from "weather in Oslo", an `order_id`
from "order 42", a `query` from the question), then given the values the case or `/call`
names. Then it answers from what the tools returned. It makes no network call and needs
no key, so `holodeck test --model test` exercises the whole pipeline of any agent. A
call a person denied (`approval:`) is named in the answer with the reason given.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from functools import partial
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

from holodeck.llm.offline_args import from_prompt
from holodeck.llm.offline_script import HANDOFF_MARK, USER_TOOL, Calls, OfflineScript

MODEL_NAME = "holodeck-test"


def offline_test_model(script: OfflineScript | None = None) -> FunctionModel:
    """The offline model, told by `script` (the run's) what each turn expects; without
    one it goes by the user's words only."""
    script = script or OfflineScript()
    return FunctionModel(
        partial(_respond, script), stream_function=partial(_stream, script), model_name=MODEL_NAME
    )


_ARGS = TestModel(seed=0)  # used only for its schema-driven argument generator
# `/call NAME` in the user's message, optionally followed by a JSON object of arguments
_CALL = re.compile(r"(?:^|(?<=\s))/call[ \t]+([\w.-]+|\*)")
EVERY = "*"  # `/call *`: every tool that is not destructive


def _respond(script: OfflineScript, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=_parts(script, messages, info), model_name=MODEL_NAME)


async def _stream(
    script: OfflineScript, messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    parts = _parts(script, messages, info)
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


def _parts(
    script: OfflineScript, messages: list[ModelMessage], info: AgentInfo
) -> list[TextPart | ToolCallPart]:
    turn = _current_turn(messages)
    own = _since_handoff(turn)  # this agent's part of the turn
    retried = _retried_tools(messages)
    answers, transfers = _output_tools(info)
    tools = {t.name: t for t in [*info.function_tools, *transfers]}
    if retried:
        return [_call(tools[name], n) for n, name in enumerate(retried) if name in tools]
    called = any(isinstance(m, ModelResponse) and m.tool_calls for m in own)
    prompt, requested = _requests(_prompt(turn) or "")
    if not called and tools:
        expected = script.take_expected()
        moving = {t.name for t in transfers}
        chosen = _choose(tools, requested, expected, moving)
        if chosen:
            handing = [c for c in chosen if c[0].name in moving][:1]
            if handing:  # last, so this agent's own calls run; the next makes the rest
                chosen = [c for c in chosen if c[0].name not in moving] + handing
                script.hand_on(tuple(c for c in expected or () if c[0] not in tools))
            return [_call(tool, n, values, prompt) for n, (tool, values) in enumerate(chosen)]
    if answers and answers[0].name == USER_TOOL:  # a simulated user
        return [ToolCallPart(USER_TOOL, script.next_move(), tool_call_id="test-user-0")]
    if answers:
        return [_best(_call(answers[0], 0), answers[0])]
    earlier = {p.tool_name for m in turn[: len(turn) - len(own)] for p in _calls(m)}
    return [TextPart(_answer(own, prompt, _refusals(requested, tools, earlier)))]


def _output_tools(info: AgentInfo) -> tuple[list[ToolDefinition], list[ToolDefinition]]:
    """The output tools that give the answer, and those that transfer the conversation
    (handoffs). The runtime lists the answer's own shape first; when text is an answer,
    every output tool is a transfer."""
    if info.allow_text_output:
        return [], list(info.output_tools)
    return list(info.output_tools[:1]), list(info.output_tools[1:])


def _since_handoff(turn: list[ModelMessage]) -> list[ModelMessage]:
    """The turn after the last transfer's result: the answering agent's own part."""
    for index in range(len(turn) - 1, -1, -1):
        message = turn[index]
        if isinstance(message, ModelRequest) and any(
            isinstance(p, ToolReturnPart) and HANDOFF_MARK in (p.metadata or {})
            for p in message.parts
        ):
            return turn[index + 1 :]
    return turn


def _calls(message: ModelMessage) -> list[ToolCallPart]:
    return message.tool_calls if isinstance(message, ModelResponse) else []


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


Requested = list[tuple[str, dict[str, Any]]]


def _choose(
    tools: dict[str, ToolDefinition],
    requested: Requested,
    expected: Calls | None,
    transfers: set[str],
) -> list[tuple[ToolDefinition, dict[str, Any]]]:
    if expected is not None:  # the turn's own choice; its sub-agents go by their prompts
        return [(tools[name], values) for name, values in expected if name in tools]
    chosen = []
    for name, values in requested:
        # `/call *` never transfers the conversation: each agent would hand it on
        every = [t for t in tools.values() if t.name not in transfers]
        for tool in every if name == EVERY else [tools[name]] if name in tools else []:
            if not _destructive(tool):
                chosen.append((tool, values))
    return chosen


def _destructive(tool: ToolDefinition) -> bool:
    """An MCP tool whose server says it may destroy or overwrite (`destructiveHint`)."""
    annotations = (tool.metadata or {}).get("mcp_annotations") or {}
    return annotations.get("destructiveHint") is True


def _requests(prompt: str) -> tuple[str, Requested]:
    """The prompt without its `/call` lines' directives, and what they ask to call."""
    requested: Requested = []
    kept: list[str] = []
    position = 0
    # searched from where the last directive (and its JSON) ended: a `/call` inside a JSON
    # argument is a value (a sub-agent's task), not a directive to this model
    while (match := _CALL.search(prompt, position)) is not None:
        kept.append(prompt[position : match.start()])
        position = match.end()
        values: dict[str, Any] = {}
        rest = prompt[position:]
        stripped = rest.lstrip(" \t")
        if stripped.startswith("{"):
            with contextlib.suppress(ValueError):
                given, length = json.JSONDecoder().raw_decode(stripped)
                if isinstance(given, dict):
                    values = given
                    position += len(rest) - len(stripped) + length
        requested.append((match.group(1), values))
    kept.append(prompt[position:])
    return " ".join("".join(kept).split()) if requested else prompt, requested


def _refusals(
    requested: Requested, tools: dict[str, ToolDefinition], earlier: set[str]
) -> list[str]:
    """Why a tool the message asked for was not called (`earlier`: called this turn by
    the agent that handed over, so not this one's to refuse)."""
    notes = []
    for name, _ in requested:
        if name == EVERY or name in earlier:
            continue
        if name not in tools:
            offered = ", ".join(sorted(tools)) or "none"
            notes.append(f"/call {name}: this agent has no tool {name} (it has: {offered})")
        elif _destructive(tools[name]):
            notes.append(
                f"/call {name}: not called, its MCP server marks it destructive; "
                "only a test case's expected_tools or chat's /call command call it"
            )
    return notes


def _prompt(turn: list[ModelMessage]) -> str | None:
    """The user's words that opened this turn (the text, without attachments)."""
    for message in turn:
        for part in message.parts if isinstance(message, ModelRequest) else ():
            if isinstance(part, UserPromptPart):
                content = part.content
                if isinstance(content, str):
                    return content
                return " ".join(c for c in content if isinstance(c, str))
    return None


def _call(
    tool: ToolDefinition,
    index: int,
    values: dict[str, Any] | None = None,
    prompt: str | None = None,
) -> ToolCallPart:
    args = _ARGS.gen_tool_args(tool)
    if prompt and isinstance(args, dict):
        # what the user asked for (a city, an order number, the question itself)
        args.update(from_prompt(tool.parameters_json_schema, prompt))
    if values and isinstance(args, dict):
        args.update(values)  # the values a test case or `/call` gives win
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


def _answer(turn: list[ModelMessage], prompt: str, notes: list[str]) -> str:
    text = _answer_from(turn, prompt)
    return "\n".join([text, *notes])


def _answer_from(turn: list[ModelMessage], prompt: str) -> str:
    results = [
        p
        for m in turn
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) and p.outcome == "success"
    ]
    # a call a person denied (human approval): the answer says so, with their reason
    denied = [
        f"{p.tool_name} was not run: {p.model_response_str()}"
        for m in turn
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) and p.outcome == "denied"
    ]
    if len(results) == 1:
        answer = _readable(results[0]) or f"{results[0].tool_name} returned nothing"
    elif results:
        answer = "\n".join(f"{p.tool_name}: {_readable(p)}" for p in results)
    else:
        answer = "" if denied else f"Test answer to: {prompt}"
    return "\n".join(line for line in (answer, *denied) if line)
