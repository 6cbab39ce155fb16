"""The input checks at the one place every text reaches the model: before each model
request, whatever surface assembled it.

The checks see what the model is about to be sent from outside it: the question, every
earlier message a client replays or a session keeps (user and system messages), the text
of text-like attachments (text/plain, CSV, JSON, XML, YAML), and, for checks with
`on: [tool_result]`, what tools returned. A redacted text replaces the original in the
request and in the run's history, so the session keeps it redacted. A blocked request
text ends the turn before the model is asked (`InputBlocked`); a blocked tool result
becomes the check's message, and the model goes on with that.

Texts that passed are remembered (by digest, a bounded number) so a session's history is
not checked again at each request; a judge check is then asked once per text per process.
Files the model reads as files (images, PDFs, office documents) are not text here and are
not checked."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    SystemPromptPart,
    TextContent,
    ToolReturnPart,
    UserPromptPart,
)

from holodeck.errors import InputError
from holodeck.runtime._turn import CURRENT_TURN

if TYPE_CHECKING:
    from pydantic_ai.capabilities import ProcessHistory

    from holodeck.runtime._guardrails import Checked, GuardrailRunner
    from holodeck.spec.models.guardrails import Phase

REMEMBERED = 4096  # texts known to pass; older ones are checked again if they come back
TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/toml")


class InputBlocked(InputError):
    """An input check blocked a text the model was about to be sent (the turn ends with
    the check's message as its answer; it never reaches a surface as an error)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class InputGuard:
    """One agent's input checks as a pydantic-ai capability (`capability()`)."""

    def __init__(self, runner: GuardrailRunner) -> None:
        self._runner = runner
        self._passed: OrderedDict[tuple[str, str], None] = OrderedDict()

    def capability(self) -> ProcessHistory[Any]:
        from pydantic_ai.capabilities import ProcessHistory

        return ProcessHistory(self.guard)

    async def guard(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """`messages` with each outside text checked (redacted ones replaced); raises
        `InputBlocked` when a check blocks a text of the request."""
        question = _question_at(messages)
        checked: list[ModelMessage] = []
        for index, message in enumerate(messages):
            if isinstance(message, ModelRequest):
                message = await self._request(message, asks=index == question)
            checked.append(message)
        return checked

    async def _request(self, message: ModelRequest, *, asks: bool) -> ModelRequest:
        parts = []
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                part = await self._prompt(part, asks=asks)
            elif isinstance(part, SystemPromptPart):
                text = await self._text(part.content, "request")
                part = part if text == part.content else replace(part, content=text)
            elif isinstance(part, ToolReturnPart) and self._runner.has("input", "tool_result"):
                part = await self._tool_result(part)
            parts.append(part)
        if all(a is b for a, b in zip(parts, message.parts, strict=True)):
            return message
        return replace(message, parts=parts)

    async def _prompt(self, part: UserPromptPart, *, asks: bool) -> UserPromptPart:
        if isinstance(part.content, str):
            text = await self._text(part.content, "request", question=asks)
            return part if text == part.content else replace(part, content=text)
        items: list[Any] = []
        for item in part.content:
            if isinstance(item, str):
                item = await self._text(item, "request", question=asks)
            elif isinstance(item, TextContent):
                text = await self._text(item.content, "request")
                item = item if text == item.content else replace(item, content=text)
            elif isinstance(item, BinaryContent) and _is_text(item.media_type):
                original = item.data.decode("utf-8", errors="replace")
                text = await self._text(original, "request")
                item = item if text == original else replace(item, data=text.encode("utf-8"))
            items.append(item)
        if all(a is b for a, b in zip(items, part.content, strict=True)):
            return part
        return replace(part, content=items)

    async def _tool_result(self, part: ToolReturnPart) -> ToolReturnPart:
        content = part.content
        original = content if isinstance(content, str) else _as_text(content)
        checked = await self._checked(original, "tool_result")
        if checked is None or checked.text == original:
            return part
        return replace(part, content=checked.text)  # redacted, or the block message

    async def _text(self, text: str, phase: Phase, *, question: bool = False) -> str:
        checked = await self._checked(text, phase, question=question)
        if checked is None:
            return text
        if checked.blocked:
            raise InputBlocked(checked.text)
        return checked.text

    async def _checked(self, text: str, phase: Phase, *, question: bool = False) -> Checked | None:
        """`text` after the checks of `phase`, or None when it is known to pass."""
        if not text or _key(phase, text) in self._passed:
            return None
        turn = CURRENT_TURN.get()
        emit: Callable[[Any], None] = turn.emit if turn is not None else _drop
        if not question:  # only the question's redacted text stands for the request in logs
            sink = emit
            emit = lambda hit: sink(replace(hit, text=None))  # noqa: E731
        checked = await self._runner.check(
            "input", text, emit, agent=turn.agent if turn else "", phase=phase
        )
        if not checked.blocked:
            self._remember(_key(phase, checked.text))
            if not checked.hits:
                self._remember(_key(phase, text))
        return checked

    def _remember(self, key: tuple[str, str]) -> None:
        self._passed[key] = None
        self._passed.move_to_end(key)
        while len(self._passed) > REMEMBERED:
            self._passed.popitem(last=False)


def _question_at(messages: list[ModelMessage]) -> int:
    """The index of the request holding the turn's question: the last one where the
    user speaks (-1 when none does)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ModelRequest) and any(
            isinstance(p, UserPromptPart) for p in message.parts
        ):
            return index
    return -1


def _is_text(media_type: str) -> bool:
    bare = media_type.split(";", 1)[0].strip().lower()
    return (
        bare.startswith("text/")
        or bare in TEXT_TYPES
        or bare.endswith(("+json", "+xml"))
        or bare in ("application/x-yaml",)
    )


def _as_text(content: Any) -> str:
    try:
        return json.dumps(content, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(content)


def _key(phase: str, text: str) -> tuple[str, str]:
    return phase, hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()


def _drop(_: Any) -> None:
    """Hits of a run outside any turn have nowhere to go."""
