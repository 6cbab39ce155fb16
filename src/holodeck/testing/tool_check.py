"""Compare the tool calls a case made with its `expected_tools`.

Names must match exactly. `tool_order` decides how order counts: `any` (each expected
tool was called), `in_order` (they were called in this order; other calls may come
between) or `exact` (exactly these calls, in this order, nothing else). A failed call (its
record has an `error`) meets an expectation only when the entry says `allow_error: true`;
an expectation met only by failed calls is listed in `failed`. A call the case denied
(`deny:`, human approval) was made by the agent: it meets its expectation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from holodeck.runtime import DENIED
from holodeck.spec.models.cases import MATCHER_KEYS, ExpectedTool, ToolOrder
from holodeck.testing.results import ArgMismatch, ToolCallRecord, ToolCheck, all_failed


def _made(call: ToolCallRecord) -> bool:
    """The call ran, or the case denied it (the agent asked for it all the same)."""
    return call.error is None or call.error.startswith(f"{DENIED}: ")


def check_tools(
    expected: Sequence[str | ExpectedTool], calls: Sequence[ToolCallRecord], order: ToolOrder
) -> ToolCheck:
    wanted = [ExpectedTool(name=e) if isinstance(e, str) else e for e in expected]
    names = [c.name for c in calls]
    missing: list[str] = []
    mismatched: list[ArgMismatch] = []
    wrong_count: list[str] = []
    failed: list[str] = []
    for entry in wanted:
        same_name = [c for c in calls if c.name == entry.name]
        if not same_name:
            if entry.count != 0:
                missing.append(entry.name)
            continue
        made = same_name if entry.allow_error else [c for c in same_name if _made(c)]
        if not made and entry.count != 0:
            failed.append(all_failed(entry.name, same_name))
            continue
        matching = [c for c in made if not _mismatches(entry, c)]
        if entry.args and not matching:
            mismatched.extend(_mismatches(entry, made[0]))
        counted = len(matching) if entry.args else len(made)
        if entry.count == 0:
            counted = len(same_name)  # "never called": a failed attempt is a call too
        if entry.count is not None and counted != entry.count:
            wrong_count.append(
                f"{entry.name}: {counted} call{'s' if counted != 1 else ''}, expected {entry.count}"
            )
    expected_names = {e.name for e in wanted}
    unexpected = [n for n in dict.fromkeys(names) if n not in expected_names]
    out_of_order = False
    if order == "in_order":
        out_of_order = not _is_subsequence([e.name for e in wanted if e.count != 0], names)
    elif order == "exact":
        out_of_order = names != [e.name for e in wanted for _ in range(max(e.count or 1, 0))]
    passed = not (missing or failed or mismatched or wrong_count or out_of_order)
    if order == "exact" and unexpected:
        passed = False
    return ToolCheck(
        passed=passed,
        order=order,
        missing=missing,
        unexpected=unexpected,
        mismatched=mismatched,
        wrong_count=wrong_count,
        out_of_order=out_of_order,
        failed=failed,
    )


def _is_subsequence(wanted: list[str], names: list[str]) -> bool:
    remaining = iter(names)
    return all(any(name == w for name in remaining) for w in wanted)


def _mismatches(entry: ExpectedTool, call: ToolCallRecord) -> list[ArgMismatch]:
    problems = []
    for argument, expected in entry.args.items():
        matcher = expected if _is_matcher(expected) else {"equals": expected}
        if matcher.get("ignore"):
            continue
        present = argument in call.args
        actual = call.args.get(argument)
        if not present or not _matches(matcher, actual):
            problems.append(
                ArgMismatch(
                    tool=call.name,
                    argument=argument,
                    expected=_describe(matcher),
                    actual=actual if present else "(not given)",
                )
            )
    return problems


def _is_matcher(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and set(value) <= MATCHER_KEYS


def _matches(matcher: dict[str, Any], actual: Any) -> bool:
    if "equals" in matcher:
        return bool(actual == matcher["equals"])
    if "regex" in matcher:
        return re.search(str(matcher["regex"]), _text(actual)) is not None
    if "contains" in matcher:
        return str(matcher["contains"]).casefold() in _text(actual).casefold()
    if "approx" in matcher:
        try:
            number = float(actual)
        except (TypeError, ValueError):
            return False
        tolerance = float(matcher.get("tolerance", 0.0))
        target = float(matcher["approx"])
        return abs(number - target) <= tolerance or math.isclose(number, target)
    return False


def _describe(matcher: dict[str, Any]) -> str:
    if "equals" in matcher:
        return f"= {matcher['equals']!r}"
    if "regex" in matcher:
        return f"matches /{matcher['regex']}/"
    if "contains" in matcher:
        return f"contains {matcher['contains']!r}"
    if "approx" in matcher:
        return f"≈ {matcher['approx']} ± {matcher.get('tolerance', 0)}"
    return "anything"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
