"""Conversation memory: `trim_history` keeps the last messages and never breaks a
tool call from its result, nor starts with anything but the user speaking."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, starts_turn, trim_history

pytestmark = pytest.mark.anyio


def retry(text: str) -> ModelRequest:
    return ModelRequest(parts=[RetryFeedbackPart(text, retry=RetryInfo("model_retry"))])


def ask(text: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(text)])


def say(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)])


def call(*ids: str) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart("lookup", {"q": i}, tool_call_id=i) for i in ids])


def results(*ids: str) -> ModelRequest:
    return ModelRequest(parts=[ToolReturnPart("lookup", f"found {i}", tool_call_id=i) for i in ids])


def turn(n: int, rounds: int = 0, calls: int = 1) -> list[ModelMessage]:
    """A user prompt, `rounds` tool rounds of `calls` calls each, and an answer."""
    messages: list[ModelMessage] = [ask(f"q{n}")]
    for r in range(rounds):
        ids = [f"t{n}r{r}c{c}" for c in range(calls)]
        messages += [call(*ids), results(*ids)]
    messages.append(say(f"a{n}"))
    return messages


def broken_pairs(messages: Sequence[ModelMessage]) -> list[str]:
    """Tool calls without their results right after, and results without their call right before."""
    problems = []
    for index, message in enumerate(messages):
        if isinstance(message, ModelResponse):
            following = messages[index + 1] if index + 1 < len(messages) else None
            answered = {
                p.tool_call_id
                for p in (following.parts if isinstance(following, ModelRequest) else [])
                if isinstance(p, ToolReturnPart)
            }
            problems += [
                f"call {c.tool_call_id}"
                for c in message.tool_calls
                if c.tool_call_id not in answered
            ]
        else:
            previous = messages[index - 1] if index else None
            called = (
                {c.tool_call_id for c in previous.tool_calls}
                if isinstance(previous, ModelResponse)
                else set()
            )
            problems += [
                f"result {p.tool_call_id}"
                for p in message.parts
                if isinstance(p, ToolReturnPart) and p.tool_call_id not in called
            ]
    return problems


def test_short_conversations_are_kept_whole() -> None:
    messages = turn(1) + turn(2, rounds=1)
    assert trim_history(messages, 20) == messages
    assert trim_history(messages, len(messages)) == messages
    assert trim_history([], 5) == []


def test_the_oldest_turns_are_dropped_first() -> None:
    messages = turn(1) + turn(2) + turn(3)
    assert trim_history(messages, 4) == messages[2:]
    assert trim_history(messages, 2) == messages[4:]


def test_a_cut_never_starts_with_a_tool_result_or_a_response() -> None:
    first, second = turn(1, rounds=2), turn(2)  # 6 + 2 messages
    messages = first + second
    # the last 5 would start inside the first turn (a tool call response): that turn goes
    kept = trim_history(messages, 5)
    assert kept == second
    assert starts_turn(kept[0])
    assert broken_pairs(kept) == []


def test_a_turn_longer_than_the_limit_keeps_its_prompt_and_its_last_rounds() -> None:
    long = turn(2, rounds=4)  # prompt, 4 x (call, results), answer: 10 messages
    messages = turn(1) + long
    kept = trim_history(messages, 5)
    # prompt + the last tool round + the answer; the older rounds went as whole pairs
    assert kept == [long[0], *long[-3:]]
    assert broken_pairs(kept) == []
    assert trim_history(messages, 2) == [long[0], long[-1]]


def test_a_limit_of_one_keeps_nothing_of_a_longer_conversation() -> None:
    assert trim_history(turn(1) + turn(2), 1) == []
    only = [ask("only")]
    assert trim_history(only, 1) == only
    with pytest.raises(ValueError, match="at least 1"):
        trim_history(turn(1), 0)


def test_output_retries_are_answers_not_starts() -> None:
    retried = retry("not JSON")
    second = turn(2)
    messages = [ask("q1"), say("oops"), retried, say("{}"), *second]
    assert not starts_turn(retried)
    assert trim_history(messages, 3) == second
    # a prompt sent together with tool results (deferred results) is no place to start either
    mixed = ModelRequest(parts=[*results("x").parts, UserPromptPart("and?")])
    assert not starts_turn(mixed)
    assert not starts_turn(say("hi"))


@st.composite
def conversations(draw: st.DrawFn) -> list[ModelMessage]:
    messages: list[ModelMessage] = []
    for n in range(draw(st.integers(0, 6))):
        rounds = draw(st.integers(0, 4))
        calls = draw(st.integers(1, 3))
        messages += turn(n, rounds, calls)
        if draw(st.booleans()) and draw(st.booleans()):  # now and then an output retry
            messages[-1:] = [say("bad"), retry("no"), say(f"a{n}")]
    return messages


@settings(max_examples=300, deadline=None)
@given(conversations(), st.integers(1, 30))
def test_trimming_keeps_a_valid_tail_within_the_limit(
    messages: list[ModelMessage], limit: int
) -> None:
    kept = trim_history(messages, limit)
    assert len(kept) <= limit
    assert broken_pairs(kept) == []
    if len(messages) <= limit:
        assert kept == messages
        return
    if kept:
        assert starts_turn(kept[0])
        assert kept[-1] is messages[-1]  # the latest answer always stays
        # kept is a tail of the conversation, or the latest turn's prompt and a tail
        is_tail = kept == messages[len(messages) - len(kept) :]
        opening_and_tail = any(kept[0] is m for m in messages) and (
            kept[1:] == messages[len(messages) - len(kept) + 1 :]
        )
        assert is_tail or opening_and_tail
    else:
        assert limit == 1
    # the longest tail that fits and starts with the user speaking is what is kept
    fitting = [i for i in range(len(messages) - limit, len(messages)) if starts_turn(messages[i])]
    if fitting:
        assert kept == messages[fitting[0] :]


async def test_a_trimmed_real_conversation_carries_on(write: Write) -> None:
    """Messages produced by the runtime (two tool calls per turn) trim to a history the
    agent accepts for its next turn."""
    root = write(
        {
            "agent.yaml": """
                name: demo
                model: {provider: test}
                instructions: {inline: You help.}
                tools:
                  - {type: function, name: one, file: tools.py, function: one}
                  - {type: function, name: two, file: tools.py, function: two}
            """,
            "tools.py": "def one() -> str:\n    return '1'\n\ndef two() -> str:\n    return '2'\n",
        }
    )
    session = Agent(load_agent(root), RunOptions(model="test")).session(max_messages=5)
    for question in ("first /call *", "second /call *", "third /call *"):
        await session.answer(question)
        assert len(session.messages) <= 5
        assert starts_turn(session.messages[0])
        assert broken_pairs(session.messages) == []
    final = await session.answer("fourth /call *")
    assert "one: 1" in final.text
    prompts = [
        p.content
        for m in session.messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]
    assert prompts == ["fourth /call *"]  # kept trimmed to 5 messages after every turn
