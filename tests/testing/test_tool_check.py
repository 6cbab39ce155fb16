"""expected_tools: exact names, argument matchers, counts and order modes."""

from __future__ import annotations

from typing import Any

import pytest

from holodeck.spec.models.cases import ExpectedTool
from holodeck.testing.results import ToolCallRecord
from holodeck.testing.tool_check import check_tools


def calls(*items: tuple[str, dict[str, Any]]) -> list[ToolCallRecord]:
    return [ToolCallRecord(name=name, args=args) for name, args in items]


RUN = calls(
    ("search", {"query": "Paris weather", "limit": 5}),
    ("weather", {"city": "Paris", "temp": 20.3, "units": "c"}),
    ("search", {"query": "Lyon", "limit": 5}),
)


def test_names_in_any_order() -> None:
    result = check_tools(["weather", "search"], RUN, "any")
    assert result.passed and result.missing == [] and result.unexpected == []


def test_missing_and_unexpected_tools_are_reported() -> None:
    result = check_tools(["weather", "email"], RUN, "any")
    assert not result.passed
    assert result.missing == ["email"]
    assert result.unexpected == ["search"]  # reported, but only `exact` fails on it
    assert check_tools(["weather"], RUN, "any").passed


@pytest.mark.parametrize(
    ("args", "ok"),
    [
        ({"city": "Paris"}, True),
        ({"city": "paris"}, False),
        ({"city": {"regex": "^Par"}}, True),
        ({"city": {"regex": "^Lon"}}, False),
        ({"city": {"contains": "ARI"}}, True),
        ({"temp": {"approx": 20, "tolerance": 0.5}}, True),
        ({"temp": {"approx": 20, "tolerance": 0.1}}, False),
        ({"temp": {"approx": 20.3}}, True),
        ({"units": {"ignore": True}, "city": "Paris"}, True),
        ({"missing_arg": "x"}, False),
        ({"city": {"equals": "Paris"}}, True),
    ],
)
def test_argument_matchers(args: dict[str, Any], ok: bool) -> None:
    result = check_tools([ExpectedTool(name="weather", args=args)], RUN, "any")
    assert result.passed is ok
    if not ok:
        (mismatch,) = result.mismatched
        assert mismatch.tool == "weather"


def test_mismatch_says_what_was_expected_and_what_came() -> None:
    result = check_tools(
        [ExpectedTool(name="weather", args={"city": {"regex": "^Lon"}, "cty": "x"})], RUN, "any"
    )
    described = {(m.argument, m.expected, str(m.actual)) for m in result.mismatched}
    assert described == {("city", "matches /^Lon/", "Paris"), ("cty", "= 'x'", "(not given)")}


def test_counts() -> None:
    assert check_tools([ExpectedTool(name="search", count=2)], RUN, "any").passed
    result = check_tools([ExpectedTool(name="search", count=1)], RUN, "any")
    assert result.wrong_count == ["search: 2 calls, expected 1"]
    only_paris = ExpectedTool(name="search", args={"query": {"contains": "paris"}}, count=1)
    assert check_tools([only_paris], RUN, "any").passed  # counts matching calls
    assert check_tools([ExpectedTool(name="email", count=0)], RUN, "any").passed


def test_order_modes() -> None:
    assert check_tools(["search", "weather"], RUN, "in_order").passed
    assert not check_tools(["weather", "email"], RUN, "in_order").passed
    backwards = check_tools(["weather", "search", "weather"], RUN, "in_order")
    assert backwards.out_of_order
    assert check_tools(["search", "weather", "search"], RUN, "exact").passed
    exact = check_tools(["search", "weather"], RUN, "exact")
    assert not exact.passed and exact.out_of_order
    assert check_tools(
        [ExpectedTool(name="search", count=2), "weather"],
        calls(("search", {}), ("search", {}), ("weather", {})),
        "exact",
    ).passed


def test_invalid_matchers_are_spec_errors() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="invalid regex"):
        ExpectedTool(name="x", args={"a": {"regex": "("}})
    with pytest.raises(ValidationError, match="needs `approx`"):
        ExpectedTool(name="x", args={"a": {"tolerance": 1}})
    with pytest.raises(ValidationError, match="one matcher"):
        ExpectedTool(name="x", args={"a": {"regex": "a", "contains": "b"}})
