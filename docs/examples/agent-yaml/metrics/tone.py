"""A code metric: 1.0 when the answer does not blame the customer, else 0.0."""

from __future__ import annotations

_BLAMING = ("your fault", "you should have", "you failed to")


def no_blame(actual_output: str, **_: object) -> float:
    """Score the answer's tone."""
    text = actual_output.lower()
    return 0.0 if any(phrase in text for phrase in _BLAMING) else 1.0
