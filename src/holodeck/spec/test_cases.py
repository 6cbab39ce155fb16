"""Test cases (agent.yaml `test_cases:`, image `tests/*.yaml`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from holodeck.spec._base import NonEmpty, Strict
from holodeck.spec.evaluations import Metric


class FileInput(Strict):
    """A file given to the model with the input (needs a multimodal model)."""

    path: NonEmpty | None = None
    url: NonEmpty | None = None
    type: Literal["image", "pdf", "text", "csv", "file"] = "file"
    description: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> FileInput:
        if (self.path is None) == (self.url is None):
            raise ValueError("give exactly one of `path` or `url`")
        return self


class Turn(Strict):
    input: NonEmpty
    ground_truth: NonEmpty | None = None
    expected_tools: list[NonEmpty] | None = None
    files: list[FileInput] | None = None


class TestCase(Strict):
    """One scenario: an input (or several turns), what a good answer is, which tools."""

    __test__ = False  # not a pytest class

    name: NonEmpty | None = None
    input: NonEmpty | None = None
    turns: Annotated[list[Turn], Field(min_length=1)] | None = None
    ground_truth: NonEmpty | None = None
    expected_tools: list[NonEmpty] | None = Field(
        default=None, description="Tool names the agent must call."
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
