"""Per-call guards: rules on a tool's arguments (`tool_rules:`), checked before a call
runs, and Python policies (`tool_policies:`) that see each call, and what it returned,
and allow, deny or ask a person.

    tool_rules:
      shell: {deny: ["rm -rf *", "*curl *"]}        # every argument of the tool
      write_file:
        path: {deny: ["secrets/*"], allow: ["src/*", "docs/*"]}   # one argument
      run_sql:
        query: {deny: ["re:(?i)\\bdrop\\s+table\\b"]}               # `re:`: a regex
    tool_policies:
      - callable: policies.py:check                 # a file in the agent's folder
        factory_params: {blocked: [prod]}           # check(**params) returns the checker
        on: [tool_call, tool_result]

An image's Omnigent `policies:` of `type: function` are read into `tool_policies`."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints

from holodeck.spec.models.base import NonEmpty, Strict

REGEX = "re:"
Phase = Literal["tool_call", "tool_result"]
_CALLABLE = r"^[^:]+\.py:[A-Za-z_][A-Za-z0-9_]*$"


def _compiles(pattern: str) -> str:
    if pattern.startswith(REGEX):
        try:
            re.compile(pattern[len(REGEX) :])
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
    return pattern


ValuePattern = Annotated[
    NonEmpty,
    AfterValidator(_compiles),
    Field(
        description="A glob over the whole value (`*`, `?`, `[...]`), or `re:` and a "
        "Python regular expression searched in it."
    ),
]


def matches(pattern: str, value: str) -> bool:
    """Whether `value` matches `pattern` (a glob over all of it, or `re:` a regex found
    anywhere in it)."""
    if pattern.startswith(REGEX):
        return re.search(pattern[len(REGEX) :], value) is not None
    return fnmatchcase(value, pattern)


class ArgumentRule(Strict):
    """What values an argument may take: none matching `deny`, and one matching `allow`
    when it is given."""

    deny: list[ValuePattern] = Field(
        default_factory=list, description="A call whose value matches one is denied."
    )
    allow: list[ValuePattern] | None = Field(
        default=None, description="When given, a call whose value matches none is denied."
    )


class ToolRule(ArgumentRule):
    """A tool's rules: `deny` / `allow` here apply to each text argument of the call;
    any other key names one argument and holds its own `{deny, allow}`."""

    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, ArgumentRule] = Field(init=False)

    @property
    def arguments(self) -> dict[str, ArgumentRule]:
        return dict(self.__pydantic_extra__ or {})


class FunctionPolicy(Strict):
    """A Python callable that sees each call (`tool_call`) and, when asked, what it
    returned (`tool_result`): it answers None (no opinion), `{"result": "ALLOW"}`,
    `{"result": "DENY", "reason": ...}`, `{"result": "ASK"}` (a person decides), or for a
    result `{"result": "ALLOW", "output": ...}` (what the model sees instead)."""

    name: NonEmpty | None = Field(
        default=None, description="Named in events and logs; default `tool_policies.0`, ..."
    )
    callable: Annotated[str, StringConstraints(pattern=_CALLABLE)] = Field(
        description="`file.py:function`, the file relative to the agent's folder."
    )
    factory_params: dict[str, Any] | None = Field(
        default=None,
        description="When given, `function(**factory_params)` is called once and returns "
        "the checker; without, `function` is the checker.",
    )
    on: Annotated[list[Phase], Field(min_length=1)] = Field(
        default_factory=lambda: list[Phase](["tool_call"]),
        description="What it sees: `tool_call` (before a call runs) and/or `tool_result` "
        "(what a call returned, before the model sees it).",
    )

    @property
    def source(self) -> tuple[str, str]:
        """(file, function)."""
        file, function = self.callable.rsplit(":", 1)
        return file, function


ToolRules = dict[NonEmpty, ToolRule]
