"""A captured conversation as a test case: the user's turns as `input` (or `turns`), the
tools the agent called as `expected_tools`, its answer as `ground_truth`.

A call's argument is checked when its value was literal: a number, a yes/no, a short
one-line text (an id, a city), or a small list or mapping of such values. Long or
multi-line text is the model's own wording, which a later run may put differently: it is
left unchecked, as is a value that redaction changed. A call that failed is expected
with `allow_error: true`; the same call made twice is expected once.

    >>> from holodeck.testing.capture.conversation import Captured, CapturedCall, CapturedTurn
    >>> call = CapturedCall("get_weather", {"city": "Oslo", "note": "line one\\nline two"})
    >>> turn = CapturedTurn("Weather in Oslo?", [call], "Sunny.")
    >>> case = case_from(Captured("example", [turn]), "oslo")
    >>> case["input"], case["ground_truth"], case["expected_tools"]
    ('Weather in Oslo?', 'Sunny.', [{'name': 'get_weather', 'args': {'city': 'Oslo'}}])
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from holodeck.errors import InputError
from holodeck.spec.models.cases import TestCase
from holodeck.testing.capture.conversation import Captured, CapturedCall, CapturedTurn
from holodeck.testing.capture.redaction import Redaction

LITERAL_CHARS = 200  # longer text is the model's wording, not a value to check


def case_from(captured: Captured, name: str, redaction: Redaction | None = None) -> dict[str, Any]:
    """The case as plain data, in the order a person writes one; checked by the test
    case model, so what is written always loads."""
    redaction = redaction or Redaction()
    turns = [t for t in captured.turns if t.input.strip()]
    if not turns:
        raise InputError(
            f"{captured.origin}: no question to make a case of",
            hint="capture a conversation in which the user asked something",
        )
    case: dict[str, Any] = {"name": name}
    if len(turns) == 1:
        case.update(_turn(turns[0], redaction))
    else:
        case["turns"] = [_turn(turn, redaction) for turn in turns]
    try:
        TestCase.model_validate(case)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise InputError(
            f"{captured.origin}: the captured case is not valid at {where}: {problem['msg']}",
            hint="write the case by hand from `holodeck test capture ... ` printed output",
        ) from None
    return case


def default_name(captured: Captured) -> str:
    """A name from the first question's words: `whats-the-weather-in-oslo`."""
    first = next((t.input for t in captured.turns if t.input.strip()), "")
    words = re.findall(r"[a-z0-9]+", first.lower().replace("'", ""))
    name = ""
    for word in words:
        if len(name) + len(word) + 1 > 40:
            break
        name = f"{name}-{word}" if name else word
    return name or "captured"


def _turn(turn: CapturedTurn, redaction: Redaction) -> dict[str, Any]:
    out: dict[str, Any] = {"input": redaction.text(turn.input)}
    answer = redaction.text(turn.answer).strip()
    if answer:
        out["ground_truth"] = answer
    expected: list[dict[str, Any]] = []
    for call in turn.calls:
        entry = _expected(call, redaction)
        if entry not in expected:
            expected.append(entry)
    if expected:
        out["expected_tools"] = expected
    return out


def _expected(call: CapturedCall, redaction: Redaction) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": call.name}
    args = {}
    for key, value in call.args.items():
        if not _literal(value):
            continue
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
        if redaction and redaction.text(text) != text:
            continue  # the value held what was taken out: it cannot be expected
        # a mapping is compared whole with `equals` (its keys could read as a matcher)
        args[key] = {"equals": value} if isinstance(value, dict) else value
    if args:
        entry["args"] = args
    if call.failed:
        entry["allow_error"] = True
    return entry


def _literal(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float):
        return True
    if isinstance(value, str):
        return len(value) <= LITERAL_CHARS and "\n" not in value
    if isinstance(value, list | dict):
        text = json.dumps(value, ensure_ascii=False)
        items = value.values() if isinstance(value, dict) else value
        return len(text) <= LITERAL_CHARS and all(_literal(item) for item in items)
    return False
