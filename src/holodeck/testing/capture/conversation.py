"""A conversation to capture, whatever it was read from: each turn's user text, the
tools the agent itself called (sub-agents' calls are theirs) and its answer.

Read from a saved session's entries (a chat `--session` file, a served session), a
saved run's case, or a chat's exchanges (`cli/chat`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from holodeck.runtime import Entry
from holodeck.testing.results import CaseResult


@dataclass(frozen=True)
class CapturedCall:
    name: str
    args: dict[str, Any]
    failed: bool = False  # the tool raised or answered with an error


@dataclass
class CapturedTurn:
    input: str
    calls: list[CapturedCall] = field(default_factory=list)
    answer: str = ""


@dataclass
class Captured:
    """The turns of one conversation and where they came from (for the case's comment)."""

    origin: str
    turns: list[CapturedTurn]
    notes: list[str] = field(default_factory=list)  # what could not be kept, said once


def from_entries(entries: Sequence[Entry], origin: str) -> Captured:
    """The turns of a saved session: each prompt that opened a turn, the tool calls made
    for it and the last answer text. Turns trimmed from the start of a long session are
    not there to capture."""
    captured = Captured(origin, [])
    answered = -1  # the message the last answer text came from
    for entry in entries:
        if entry.role == "user" and entry.opens_turn:
            captured.turns.append(CapturedTurn(_prompt_text(entry.content, captured)))
        elif not captured.turns:
            continue
        elif entry.role == "tool_call":
            args = entry.content if isinstance(entry.content, dict) else {}
            captured.turns[-1].calls.append(CapturedCall(entry.name, args))
        elif entry.role == "assistant":  # a response's texts together, the last response's
            turn = captured.turns[-1]
            turn.answer = (turn.answer if entry.message == answered else "") + str(entry.content)
            answered = entry.message
    return captured


def from_case_result(case: CaseResult, origin: str) -> Captured:
    """A saved run's case, as its first run went: its turns' inputs, calls and answers."""
    if not case.runs or not case.runs[0].turns:
        return Captured(origin, [], [f"case {case.name!r} has no turns recorded"])
    turns = [
        CapturedTurn(
            turn.input,
            [
                CapturedCall(call.name, dict(call.args), call.error is not None)
                for call in turn.tool_calls
                if not call.agent  # a sub-agent's own calls are not the agent's
            ],
            turn.output,
        )
        for turn in case.runs[0].turns
    ]
    return Captured(origin, turns)


def _prompt_text(content: Any, captured: Captured) -> str:
    """A prompt's words; attachments are not carried into a case (said once)."""
    if isinstance(content, str):
        return content
    texts = [part for part in content if isinstance(part, str)] if isinstance(content, list) else []
    if len(texts) != (len(content) if isinstance(content, list) else 0):
        note = "attachments sent with a question are not captured; add them as `files:`"
        if note not in captured.notes:
            captured.notes.append(note)
    return "\n".join(texts)
