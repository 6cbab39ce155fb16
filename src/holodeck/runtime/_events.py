"""The events a turn streams: text as it arrives, tool calls as they start and end,
token usage, and the final message. Chat, test and serve all consume these."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer's text."""

    text: str
    agent: str = ""  # which (sub-)agent wrote it; "" is the top agent


@dataclass(frozen=True)
class ToolCallStarted:
    call_id: str
    name: str
    args: dict[str, Any]
    agent: str = ""
    parent_call_id: str | None = None  # set for calls made by a sub-agent


@dataclass(frozen=True)
class ToolCallFinished:
    call_id: str
    name: str
    args: dict[str, Any]
    result: Any
    error: str | None
    duration_ms: float
    agent: str = ""
    parent_call_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class ApprovalRequired:
    """A tool call that waits for a person's decision (`approval:`): the turn pauses
    after it, and `Session.resume()` goes on once every such call is decided."""

    call_id: str
    name: str
    args: dict[str, Any]
    agent: str = ""
    # a call of a tool the client runs (`client_tools`): its result, not a decision,
    # goes on with the turn
    client: bool = False


@dataclass(frozen=True)
class Usage:
    """Tokens used by one turn (all model requests, sub-agents and prompt tools included)."""

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
        )


@dataclass(frozen=True)
class FinalMessage:
    """The turn's answer: its text, and the parsed object when a response_format is set."""

    text: str
    output: Any = None
    usage: Usage = field(default_factory=Usage)
    tool_calls: tuple[ToolCallFinished, ...] = ()
    model: str = ""  # the model that gave the answer (a fallback, when one took over)
    # calls waiting for a decision: the turn is paused, `text` is empty
    pending: tuple[ApprovalRequired, ...] = ()
    agent: str = ""  # the name of the agent that answered (after a handoff, the target's)


@dataclass(frozen=True)
class GuardrailTriggered:
    """A guardrail check matched: on the user's message (`input`) or the answer
    (`output`). `block` ends the turn, whose answer is then `message`; `redact` replaced
    what matched and the turn went on. What matched is never repeated here."""

    guardrail: str  # the check's `name`, else `input.0`, `output.1`, ...
    side: str  # "input" or "output"
    action: str  # "block" or "redact"
    kind: str  # block_patterns, block_keywords, pii, max_length or judge
    message: str | None = None  # what the user is told, when it blocks
    reason: str | None = None  # a judge's reason
    agent: str = ""  # the sub-agent whose guardrail it was; "" is the top agent
    text: str | None = None  # after a redaction: the text now (what a log should keep)


@dataclass(frozen=True)
class HistoryCompacted:
    """Before the turn, the conversation's older turns were replaced by a summary a model
    wrote (`memory.compaction`): the history neared the model's context window. Token
    counts are estimates (four characters of the request a token); `usage` is the summary
    call's, which the session's spend includes."""

    summarised: int  # messages the summary replaced
    kept: int  # messages kept word for word after it
    tokens_before: int
    tokens_after: int
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class HandedOff:
    """The conversation passed from one agent to another (`handoffs:`): `to_agent`
    answers this turn on, and the session's later messages, until it hands back. `back`:
    it returned to the agent that had handed it over."""

    from_agent: str
    to_agent: str
    reason: str | None = None  # what the handing agent gave as its reason, if anything
    back: bool = False
    tool: str = ""  # the transfer tool the model called (`transfer_to_billing`, ...)
    call_id: str = ""  # that call's id


Event = (
    TextDelta
    | ToolCallStarted
    | ToolCallFinished
    | ApprovalRequired
    | Usage
    | FinalMessage
    | GuardrailTriggered
    | HistoryCompacted
    | HandedOff
)


async def final_message(events: AsyncIterator[Event]) -> FinalMessage:
    """The last event of a turn's stream, read to its end (the answer only)."""
    final: FinalMessage | None = None
    async for event in events:
        if isinstance(event, FinalMessage):
            final = event
    assert final is not None  # a turn that ends without one raised instead
    return final
