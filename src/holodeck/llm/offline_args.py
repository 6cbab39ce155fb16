"""Argument values the offline model takes from the user's words, so a smoke run sends a
tool what a person asked for (`city: Oslo` for "weather in Oslo") instead of filler.

One small heuristic per argument, read from its JSON schema (name, description, enum,
format, pattern) and the prompt; an argument no rule fits is left to the generator:

    >>> schema = {"properties": {"city": {"type": "string"}, "order_id": {"type": "integer"}}}
    >>> from_prompt(schema, "Is order 42 still in Oslo?")
    {'city': 'Oslo', 'order_id': 42}
"""

from __future__ import annotations

import re
from typing import Any

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_DATE_TIME = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\d)")
# a token with a digit in it: 42, A-1093, ord_77 (what ids look like)
_ID = re.compile(r"(?<![\w-])(?=[\w-]*\d)[A-Za-z0-9][\w-]*")
# capitalised words after "in", "for", "at", ...: "weather in New York" -> New York
_PLACE = re.compile(r"\b(?i:in|for|at|to|from|near|of)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")

_PLACE_WORDS = {"city", "location", "place", "country", "region", "town", "destination"}
_ID_WORDS = {"id", "number", "no", "num", "code", "ref", "reference"}
_PROMPT_WORDS = {"query", "question", "text", "message", "prompt", "q", "input", "task"}
_EMAIL_WORDS = {"email", "mail"}
_DATE_WORDS = {"date", "day"}


def from_prompt(schema: dict[str, Any], prompt: str) -> dict[str, Any]:
    """Values for the top-level properties of `schema` that the prompt supplies."""
    values: dict[str, Any] = {}
    properties = schema.get("properties")
    if not prompt.strip() or not isinstance(properties, dict):
        return values
    for name, prop in properties.items():
        if isinstance(prop, dict):
            value = _value(str(name), prop, prompt)
            if value is not None:
                values[name] = value
    return values


def _value(name: str, prop: dict[str, Any], prompt: str) -> Any:
    types = _types(prop)
    words = set(_words(name)) | set(_words(str(prop.get("title", ""))))
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        return _mentioned(enum, prompt)
    if types & {"integer", "number"}:
        if not words & _ID_WORDS:
            return None
        match = _NUMBER.search(prompt)
        if match is None:
            return None
        number = float(match.group())
        return int(number) if "integer" in types and number.is_integer() else number
    if types and "string" not in types:
        return None
    text = _string(words, prop, prompt)
    pattern = prop.get("pattern")
    if isinstance(pattern, str) and (text is None or not _fits(pattern, text)):
        return _token_matching(pattern, prompt)
    return text


def _string(words: set[str], prop: dict[str, Any], prompt: str) -> str | None:
    kind = prop.get("format")
    description = set(_words(str(prop.get("description", ""))))
    if kind == "email" or words & _EMAIL_WORDS:
        return _found(_EMAIL, prompt)
    if kind == "date-time":
        return _found(_DATE_TIME, prompt)
    if kind == "date" or words & _DATE_WORDS:
        return _found(_DATE, prompt)
    if words & _PLACE_WORDS or (not words & _ID_WORDS and description & _PLACE_WORDS):
        places = _PLACE.findall(prompt)
        return places[0] if places else None
    if words & _ID_WORDS:
        return _found(_ID, prompt)
    if words & _PROMPT_WORDS:
        return prompt.strip()
    return None


def _types(prop: dict[str, Any]) -> set[str]:
    """The JSON types a property takes (`anyOf: [{type: string}, {type: null}]` too)."""
    kind = prop.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {str(k) for k in kind}
    options = prop.get("anyOf") or prop.get("oneOf") or []
    return {str(o["type"]) for o in options if isinstance(o, dict) and "type" in o}


def _words(name: str) -> list[str]:
    """`orderId`, `order_id`, `Order ID` -> ["order", "id"]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def _mentioned(enum: list[Any], prompt: str) -> Any:
    folded = prompt.casefold()
    for option in enum:
        text = str(option).casefold()
        if text and re.search(rf"(?<!\w){re.escape(text)}(?!\w)", folded):
            return option
    return None


def _found(pattern: re.Pattern[str], prompt: str) -> str | None:
    match = pattern.search(prompt)
    return match.group() if match else None


def _fits(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False


def _token_matching(pattern: str, prompt: str) -> str | None:
    """The first word of the prompt (without surrounding punctuation) the pattern takes."""
    for token in prompt.split():
        word = token.strip(".,;:!?\"'()[]{}")
        if word and _fits(pattern, word):
            return word
    return None
