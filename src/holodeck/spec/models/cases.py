"""Test cases (agent.yaml `test_cases:`, image `tests/*.yaml`)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from holodeck.spec.models.base import NonEmpty, Strict
from holodeck.spec.models.evaluations import Metric

MATCHER_KEYS = frozenset({"equals", "regex", "contains", "approx", "tolerance", "ignore"})


class ExpectedTool(Strict):
    """A tool the agent must call, optionally with argument checks and a call count.

    Each entry of `args` is a value the argument must equal, or one matcher:
    `{regex: "^Par"}`, `{contains: "paris"}` (case-insensitive), `{approx: 20,
    tolerance: 0.5}`, `{ignore: true}`, or `{equals: {...}}` to compare a mapping exactly.
    """

    name: NonEmpty
    args: dict[str, Any] = Field(default_factory=dict)
    count: Annotated[int, Field(ge=0)] | None = Field(
        default=None, description="Exact number of calls; default: at least one."
    )

    @field_validator("args")
    @classmethod
    def _matchers(cls, args: dict[str, Any]) -> dict[str, Any]:
        for name, expected in args.items():
            if not (isinstance(expected, dict) and expected and set(expected) <= MATCHER_KEYS):
                continue
            if "regex" in expected:
                try:
                    re.compile(str(expected["regex"]))
                except re.error as exc:
                    raise ValueError(f"args.{name}: invalid regex: {exc}") from None
            if "tolerance" in expected and "approx" not in expected:
                raise ValueError(f"args.{name}: `tolerance` needs `approx`")
            if "approx" in expected and not isinstance(expected["approx"], int | float):
                raise ValueError(f"args.{name}: `approx` must be a number")
            if len(set(expected) - {"tolerance"}) != 1:
                raise ValueError(f"args.{name}: give one matcher of {sorted(MATCHER_KEYS)}")
        return args


ExpectedTools = list[NonEmpty | ExpectedTool]
ToolOrder = Literal["any", "in_order", "exact"]


class FileInput(Strict):
    """A file sent to the model with the input (the agent must accept its modality)."""

    path: NonEmpty = Field(description="File relative to the agent's directory.")
    type: Literal["image", "pdf", "text", "csv", "file"] | None = Field(
        default=None, description="Media kind; default: guessed from the file name."
    )
    description: str | None = Field(
        default=None, description="Said to the model before the file, e.g. what it shows."
    )


class Turn(Strict):
    input: NonEmpty
    ground_truth: NonEmpty | None = None
    expected_tools: ExpectedTools | None = None
    files: list[FileInput] | None = None


class TestCase(Strict):
    """One scenario: an input (or several turns), what a good answer is, which tools."""

    __test__ = False  # not a pytest class

    name: NonEmpty | None = None
    input: NonEmpty | None = None
    turns: Annotated[list[Turn], Field(min_length=1)] | None = None
    ground_truth: NonEmpty | None = None
    expected_tools: ExpectedTools | None = Field(
        default=None, description="Tools the agent must call: names, or name/args/count."
    )
    tool_order: ToolOrder = Field(
        default="any",
        description="any: each expected tool called; in_order: in this order (others may "
        "come between); exact: exactly these calls, in this order.",
    )
    files: list[FileInput] | None = None
    retrieval_context: list[str] | None = Field(
        default=None, description="Context for RAG metrics; default: the tools' results."
    )
    evaluations: list[Metric] | None = Field(
        default=None, description="Replaces the agent's metrics for this case."
    )

    @model_validator(mode="after")
    def _input_or_turns(self) -> TestCase:
        if (self.input is None) == (self.turns is None):
            raise ValueError("give either `input` or `turns`")
        return self


def expected_name(entry: str | ExpectedTool) -> str:
    return entry if isinstance(entry, str) else entry.name
