"""`optimizer:`: what `holodeck test optimize` may change, how it scores a change and when
it stops (agent.yaml, or an image's config.yaml).

Field names follow the shipped HoloDeck's `evaluations.optimizer` block where it has them
(`axes.numeric[].path/type/range`, `axes.textual[].path/max_chars`, `loss`, `seed`,
`max_cycles`, `numeric_phase`, `textual_phase`, `min_delta`)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, model_validator

from holodeck.spec.diagnostics import did_you_mean
from holodeck.spec.models.base import NonEmpty, PositiveFloat, Strict
from holodeck.spec.models.model_settings import ModelSettings

# setting -> (kind, lowest, highest) the setting accepts
MODEL_SETTINGS: dict[str, tuple[Literal["float", "int"], float, float]] = {
    "temperature": ("float", 0.0, 2.0),
    "top_p": ("float", 0.0, 1.0),
    "max_tokens": ("int", 1, 1_000_000),
}
TOOL_SETTINGS: dict[str, tuple[Literal["float", "int"], float, float]] = {
    "top_k": ("int", 1, 100),
    "min_similarity_score": ("float", 0.0, 1.0),
}
_TOOL_PATH = re.compile(r"^tools\[name=([A-Za-z0-9_-]{1,64})\]\.([A-Za-z_]+)$")
SETTING_FORMS = (
    "model.temperature, model.top_p, model.max_tokens (or temperature, top_p, max_tokens), "
    "tools[name=TOOL].top_k, tools[name=TOOL].min_similarity_score"
)


def parse_setting(path: str) -> tuple[str | None, str]:
    """(search tool name or None for the model, setting) of an axis path; ValueError when
    the path names no setting the search can change."""
    name = path.strip()
    if name.startswith("model."):
        name = name.removeprefix("model.")
    if name in MODEL_SETTINGS:
        return None, name
    found = _TOOL_PATH.match(path.strip())
    if found and found.group(2) in TOOL_SETTINGS:
        return found.group(1), found.group(2)
    if found:
        close = did_you_mean(found.group(2), list(TOOL_SETTINGS))
        raise ValueError(
            f"a search tool has no setting `{found.group(2)}` to tune"
            + (f" ({close})" if close else f"; the settings are: {SETTING_FORMS}")
        )
    close = did_you_mean(path.strip(), [*MODEL_SETTINGS, *(f"model.{m}" for m in MODEL_SETTINGS)])
    raise ValueError(
        f"unknown setting `{path}`"
        + (f" ({close})" if close else "")
        + f"; the settings are: {SETTING_FORMS}"
    )


class NumericAxis(Strict):
    """A number the search moves by coordinate descent, within `range`."""

    path: NonEmpty = Field(description="The setting: " + SETTING_FORMS + ".")
    type: Literal["float", "int", "categorical"] | None = Field(
        default=None,
        description="float or int: `range` is [min, max]; categorical: `range` lists the "
        "values to choose from. Default: the setting's own kind.",
    )
    range: Annotated[list[float], Field(min_length=1)] = Field(
        description="[min, max], or the choices for `type: categorical`."
    )
    step: PositiveFloat | None = Field(
        default=None,
        description="First move size (default: the whole range, so the first moves try its "
        "ends); halved whenever no move helps.",
    )

    @model_validator(mode="after")
    def _fits(self) -> NumericAxis:
        tool, setting = parse_setting(self.path)
        kind, lowest, highest = (TOOL_SETTINGS if tool else MODEL_SETTINGS)[setting]
        if self.type == "categorical":
            if self.step is not None:
                raise ValueError("a categorical axis moves one choice at a time: remove `step`")
        elif len(self.range) != 2:
            raise ValueError(f"`range` of `{self.path}` must be [min, max]")
        elif self.range[0] > self.range[1]:
            raise ValueError(
                f"`range` of `{self.path}` has min {self.range[0]:g} > max {self.range[1]:g}: "
                "write [min, max]"
            )
        if (self.type or kind) == "int" and any(v != int(v) for v in self.range):
            raise ValueError(f"`{self.path}` takes whole numbers: `range` has a fraction")
        outside = [v for v in self.range if not lowest <= v <= highest]
        if outside:
            raise ValueError(
                f"`{self.path}` takes values from {lowest:g} to {highest:g}; "
                f"`range` has {outside[0]:g}"
            )
        return self

    @property
    def kind(self) -> Literal["float", "int", "categorical"]:
        if self.type is not None:
            return self.type
        tool, setting = parse_setting(self.path)
        return (TOOL_SETTINGS if tool else MODEL_SETTINGS)[setting][0]


class TextualAxis(Strict):
    """Text a proposer model rewrites: the instructions (inline, or their file)."""

    path: Literal["instructions", "instructions.inline", "instructions.file"] = Field(
        default="instructions",
        description="The instructions, wherever they are written (inline or in a file).",
    )
    max_chars: Annotated[int, Field(gt=0)] = Field(
        default=8000, description="A proposal longer than this is refused without a run."
    )


class Axes(Strict):
    numeric: list[NumericAxis] = Field(default_factory=list)
    textual: Annotated[list[TextualAxis], Field(max_length=1)] = Field(default_factory=list)

    @model_validator(mode="after")
    def _some(self) -> Axes:
        if not self.numeric and not self.textual:
            raise ValueError(
                "name something to search: `numeric: [{path: temperature, range: [0, 1]}]` "
                "and/or `textual: [{path: instructions}]`"
            )
        paths = [parse_setting(a.path) for a in self.numeric]
        if len(set(paths)) != len(paths):
            raise ValueError("each setting may be searched once: a path is listed twice")
        return self


class Phase(Strict):
    """How long one phase of a cycle may go on."""

    max_trials: Annotated[int, Field(gt=0)] = Field(description="Candidates in the phase.")
    patience: Annotated[int, Field(gt=0)] = Field(
        description="The phase stops after this many candidates in a row are not kept."
    )


class Budget(Strict):
    """Limits of the whole search; the first one reached stops it."""

    candidates: Annotated[int, Field(gt=0)] | None = Field(
        default=None, description="Test runs, the original's included."
    )
    calls: Annotated[int, Field(gt=0)] | None = Field(
        default=None, description="Model requests: the agent's, the judges' and the proposer's."
    )
    cost: PositiveFloat | None = Field(
        default=None, description="USD, priced from pydantic-ai's bundled price list."
    )


class OptimizerSettings(Strict):
    """`optimizer:`: what to search, how to score and when to stop."""

    axes: Axes
    objective: NonEmpty = Field(
        default="pass_rate",
        description="`pass_rate`, or the name of a metric whose mean score is maximised.",
    )
    loss: dict[NonEmpty, PositiveFloat] | None = Field(
        default=None,
        description="Weights of metrics: the objective is their weighted mean score "
        "(instead of `objective`).",
    )
    proposer: ModelSettings | None = Field(
        default=None,
        description="The model that proposes instructions (default: the judges' model, "
        "else the agent's).",
    )
    holdout: Annotated[float, Field(ge=0.0, lt=1.0)] = Field(
        default=0.3,
        description="Share of the cases held out: a new instructions text is kept only when "
        "their score improves.",
    )
    seed: int = Field(default=42, description="Seeds the train/holdout split.")
    budget: Budget = Field(default_factory=Budget)
    max_cycles: Annotated[int, Field(gt=0)] = Field(
        default=3, description="Rounds of numeric then textual search."
    )
    numeric_phase: Phase = Field(default_factory=lambda: Phase(max_trials=10, patience=5))
    textual_phase: Phase = Field(default_factory=lambda: Phase(max_trials=5, patience=3))
    min_delta: Annotated[float, Field(ge=0.0)] = Field(
        default=0.0, description="A change is kept only when it improves the score by more."
    )

    @model_validator(mode="after")
    def _one_objective(self) -> OptimizerSettings:
        if self.loss is not None and "objective" in self.model_fields_set:
            raise ValueError("give `objective` or `loss`, not both")
        if self.loss is not None and not self.loss:
            raise ValueError("`loss` needs at least one metric weight")
        return self
