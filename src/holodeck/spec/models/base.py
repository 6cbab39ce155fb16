"""Shared base for definition models: strict, immutable, documented."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

# Providers reject other tool names (OpenAI and Anthropic both enforce this pattern).
TOOL_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"

ToolName = Annotated[
    str,
    StringConstraints(pattern=TOOL_NAME_PATTERN),
    Field(description="Name the model sees: letters, digits, `_` and `-`, at most 64."),
]
NonEmpty = Annotated[str, StringConstraints(min_length=1, strip_whitespace=False)]
PositiveFloat = Annotated[float, Field(gt=0)]


class Strict(BaseModel):
    """Unknown keys are errors; parsed values never change afterwards."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
