"""A chat's transcript: each question, the tool calls and handoffs made for it and the
answer (headed by the agent that wrote it), kept for `/save FILE` (markdown), and rebuilt
from a resumed conversation's messages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from holodeck.cli.chat.view import as_text, handoff_line, shorten
from holodeck.runtime import (
    Event,
    FinalMessage,
    HandedOff,
    TextDelta,
    ToolCallFinished,
    entries_of,
)

if TYPE_CHECKING:
    from holodeck.runtime import Message


@dataclass
class Exchange:
    """One question, the tool calls made for it and the answer (for /save)."""

    prompt: str
    calls: list[ToolCallFinished] = field(default_factory=list)
    answer: str = ""
    status: Literal["answered", "cancelled", "failed", "reset", "resumed"] = "answered"
    note: str = ""
    handoffs: list[HandedOff] = field(default_factory=list)
    agent: str = ""  # the agent that answered, when a handoff made it another

    def record(self, event: Event) -> None:
        if isinstance(event, ToolCallFinished):
            self.calls.append(event)
        elif isinstance(event, HandedOff):
            self.handoffs.append(event)
            self.agent = event.to_agent
        elif isinstance(event, TextDelta) and not event.agent:
            self.answer += event.text  # what a cancelled answer had written
        elif isinstance(event, FinalMessage):
            self.answer = event.text
            self.agent = event.agent or self.agent


def exchanges_from(messages: Sequence[Message]) -> list[Exchange]:
    """A resumed conversation as exchanges: each prompt, its tool calls and its answer."""
    exchanges: list[Exchange] = []
    calls: dict[str, dict[str, Any]] = {}  # call id -> its arguments
    answered = -1  # the message the last answer text came from
    for entry in entries_of(messages):
        if entry.role == "user" and entry.opens_turn:
            text = entry.content if isinstance(entry.content, str) else "[attachments]"
            exchanges.append(Exchange(text, status="resumed"))
        elif not exchanges:
            continue
        elif entry.role == "tool_result":
            args = calls.get(entry.call_id, {})
            exchanges[-1].calls.append(
                ToolCallFinished(entry.call_id, entry.name, args, entry.content, None, 0)
            )
        elif entry.role == "tool_call":
            calls[entry.call_id] = entry.content
        elif entry.role == "assistant":  # a response's texts together, the last response's
            joined = exchanges[-1].answer if entry.message == answered else ""
            exchanges[-1].answer = joined + entry.content
            answered = entry.message
    return exchanges


def transcript_markdown(agent_name: str, exchanges: Sequence[Exchange]) -> str:
    lines = [f"# Chat with {agent_name}", ""]
    for exchange in exchanges:
        if exchange.status == "reset":
            lines += ["---", "", "*The conversation was reset.*", ""]
            continue
        lines += ["## You", "", exchange.prompt, "", f"## {exchange.agent or agent_name}", ""]
        for handoff in exchange.handoffs:
            lines += [f"*{handoff_line(handoff)}*", ""]
        for call in exchange.calls:
            depth = call.agent.count("/") + 1 if call.agent else 0
            args = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in call.args.items())
            outcome = (
                f"failed: {call.error}"
                if call.error is not None
                else "→ " + shorten(as_text(call.result), 200)
            )
            lines.append(f"{'  ' * depth}- `{call.name}({args})` {outcome}")
        if exchange.calls:
            lines.append("")
        if exchange.answer:
            lines += [exchange.answer, ""]
        if exchange.status == "cancelled":
            lines += ["*Cancelled: not kept in the conversation.*", ""]
        elif exchange.status == "failed":
            lines += [f"*Failed: {exchange.note}*", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
