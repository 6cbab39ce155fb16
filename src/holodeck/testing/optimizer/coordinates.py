"""One numeric axis as coordinate descent sees it: a position, a step, the moves from a
value. Categorical axes move over their choices' indices."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from holodeck.spec.models.optimizer import (
    MODEL_SETTINGS,
    TOOL_SETTINGS,
    NumericAxis,
    parse_setting,
)

FLOAT_HALVINGS = 4  # a float step stops shrinking at 1/16 of where it started


@dataclass
class Coordinate:
    axis: NumericAxis
    step: float = field(init=False)
    min_step: float = field(init=False)

    def __post_init__(self) -> None:
        self.reset()

    @property
    def low(self) -> float:
        return 0.0 if self.axis.kind == "categorical" else self.axis.range[0]

    @property
    def high(self) -> float:
        return (
            float(len(self.axis.range) - 1)
            if self.axis.kind == "categorical"
            else self.axis.range[1]
        )

    @property
    def _whole(self) -> bool:
        tool, name = parse_setting(self.axis.path)
        return (TOOL_SETTINGS if tool else MODEL_SETTINGS)[name][0] == "int"

    def reset(self) -> None:
        """The first step: `step`, else the whole range (the first moves try its ends)."""
        first = self.axis.step or (self.high - self.low)
        if self.axis.kind == "float":
            self.step, self.min_step = first, first / 2**FLOAT_HALVINGS
        else:
            self.step, self.min_step = float(max(1, math.ceil(first))), 1.0

    def shrink(self) -> bool:
        """Halve the step; False when it was already the smallest."""
        if self.step <= self.min_step:
            return False
        half = self.step / 2
        self.step = max(self.min_step, half if self.axis.kind == "float" else math.floor(half))
        return True

    def moves(self, value: Any) -> list[Any]:
        """Values one step up and one step down from `value` (an unset value moves from the
        middle of the range), within the range, without repeats."""
        at = self._position(value)
        found = []
        for target in (at + self.step, at - self.step):
            moved = self._value(min(self.high, max(self.low, target)))
            if moved != value and moved not in found:
                found.append(moved)
        return found

    def _position(self, value: Any) -> float:
        if value is None:
            return (self.low + self.high) / 2
        if self.axis.kind == "categorical":
            return float(self.axis.range.index(value)) if value in self.axis.range else 0.0
        return float(value)

    def _value(self, position: float) -> Any:
        if self.axis.kind == "categorical":
            choice = self.axis.range[round(position)]
            return int(choice) if self._whole else choice
        if self.axis.kind == "int":
            return round(position)
        return round(position, 6)
