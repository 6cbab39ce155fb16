"""Arguments as the model gives them, made what the server expects again: `null`s that
`model_schema` allowed for optional properties are taken out before the call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ArgShape:
    """Where `model_schema` made optional properties nullable, so `strip_nulls` can undo it."""

    drop_null: frozenset[str] = frozenset()
    properties: Mapping[str, ArgShape] = field(default_factory=dict)
    items: ArgShape | None = None


def strip_nulls(value: Any, shape: ArgShape | None) -> Any:
    """`value` without the nulls given for properties that were optional (not nullable)."""
    if shape is None:
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if item is None and key in shape.drop_null:
                continue
            child = shape.properties.get(key)
            out[key] = strip_nulls(item, child) if child is not None else item
        return out
    if isinstance(value, list) and shape.items is not None:
        return [strip_nulls(item, shape.items) for item in value]
    return value
