"""Our own words for pydantic's error types.

pydantic's messages ("Input should be a valid dictionary or instance of
BuiltinConfig", "String should have at least 1 character") name Python types and
classes a YAML author never wrote. Each error type we meet in definitions gets a
phrase here instead: type mismatches become a noun phrase ("a mapping", "a whole
number") so the members of a union can be joined into one sentence, constraints
become a sentence about the value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_SEPARATOR = re.compile(r", | or ")
_SHOWN_MAX = 40  # longer text is described, not echoed

# error type -> what was expected, as a noun phrase
_EXPECTED = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "`true` or `false`",
    "bool_parsing": "`true` or `false`",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "none_required": "nothing (leave it empty)",
}


def expected(err: Any) -> list[str] | None:
    """The forms the value may take, when `err` says only that its type is wrong
    (several for a literal: each allowed value)."""
    kind = err["type"]
    if kind in ("literal_error", "enum"):
        return [f"`{choice}`" for choice in choices(err)]
    phrase = _EXPECTED.get(kind)
    return [phrase] if phrase is not None else None


def is_mapping_error(err: Any) -> bool:
    return err["type"] in ("dict_type", "model_type", "model_attributes_type")


def choices(err: Any) -> list[str]:
    """The allowed values of a literal or enum error, unquoted."""
    # pydantic lists them as `'a', 'b' or 'c'` (numbers unquoted: `1 or 2`)
    listed = str((err.get("ctx") or {}).get("expected", ""))
    return [part.strip("'") for part in _SEPARATOR.split(listed) if part]


def constraint(err: Any) -> str | None:
    """A sentence for a value of the right type that breaks a limit, or None."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "greater_than":
        return f"must be greater than {_number(ctx['gt'])}, not {shown(err.get('input'))}"
    if kind == "greater_than_equal":
        return f"must be at least {_number(ctx['ge'])}, not {shown(err.get('input'))}"
    if kind == "less_than":
        return f"must be less than {_number(ctx['lt'])}, not {shown(err.get('input'))}"
    if kind == "less_than_equal":
        return f"must be at most {_number(ctx['le'])}, not {shown(err.get('input'))}"
    if kind == "multiple_of":
        return f"must be a multiple of {_number(ctx['multiple_of'])}"
    if kind == "string_too_short":
        least = int(ctx.get("min_length", 1))
        return "must not be empty" if least <= 1 else f"needs at least {least} characters"
    if kind == "string_too_long":
        return f"may have at most {ctx.get('max_length')} characters"
    if kind == "too_short":
        least = int(ctx.get("min_length", 1))
        return "must not be empty" if least <= 1 else f"needs at least {least} entries"
    if kind == "too_long":
        return f"may have at most {ctx.get('max_length')} entries"
    if kind == "string_pattern_mismatch":
        return f"{shown(err.get('input'))} does not match the pattern `{ctx.get('pattern')}`"
    return None


def shown(value: Any) -> str:
    """A given value as a message shows it: short scalars quoted, the rest described
    (a whole mapping is never echoed: it may hold secrets and fills the line)."""
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, int | float):
        return f"`{value}`"
    if isinstance(value, str):
        if not value:
            return "empty text"
        if len(value) > _SHOWN_MAX or "\n" in value:
            return "a longer text"
        return f"`{value}`"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return "a value of another kind"


def join_or(phrases: Sequence[str]) -> str:
    """`a`, `b` or `c`."""
    if len(phrases) <= 1:
        return "".join(phrases)
    return ", ".join(phrases[:-1]) + " or " + phrases[-1]


def join_and(phrases: Sequence[str]) -> str:
    """`a`, `b` and `c`."""
    if len(phrases) <= 1:
        return "".join(phrases)
    return ", ".join(phrases[:-1]) + " and " + phrases[-1]


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
