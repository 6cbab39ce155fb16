"""A guardrail's regular expressions, run within a time bound. A pattern such as
`^(a|aa)+$` takes time that doubles with each character of some texts; Python's `re`
cannot be stopped and holds the interpreter while it runs, so one message could stall
every agent of a server. The `regex` package reads the same syntax, stops at a timeout
and lets other threads run meanwhile; the checks run off the event loop (see
`_guardrails.py`), so the bound is all a slow pattern costs."""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from holodeck.errors import ExecutionError

# all of one check's patterns on one text: a base, and time that grows with the text
# and the number of patterns (ten times what plain patterns take here), so a long
# attachment's text is not cut short while a short message is bounded tightly
SECONDS = 0.5
SECONDS_PER_CHAR = 1e-6


class TooSlow(ExecutionError):
    """A check's patterns took longer than their bound on a text (the check then counts
    as a hit: it never reaches a surface as an error)."""

    def __init__(self, pattern: str, seconds: float) -> None:
        super().__init__(f"`{pattern}` took over {seconds:g} s")
        self.pattern, self.seconds = pattern, seconds


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    # loaded by the first check (7 ms): an agent without pattern guardrails never needs it
    import regex  # type: ignore[import-untyped]

    return regex.compile(pattern, regex.VERSION0)  # VERSION0: what `re` means by it


def bound(patterns: Sequence[str], texts: Sequence[str]) -> float:
    """The seconds `patterns` may take on `texts`, in all."""
    return SECONDS + SECONDS_PER_CHAR * len(patterns) * sum(len(t) for t in texts)


def pattern_spans(
    patterns: Sequence[str], texts: Sequence[str], seconds: float | None = None
) -> list[list[tuple[int, int]]]:
    """For each of `texts`, the spans (not empty) that any of `patterns` matches.
    Raises `TooSlow` when they take longer than `seconds` (by default their `bound`)."""
    seconds = bound(patterns, texts) if seconds is None else seconds
    deadline = time.monotonic() + seconds
    found: list[list[tuple[int, int]]] = []
    for text in texts:
        spans: list[tuple[int, int]] = []
        for pattern in patterns:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TooSlow(pattern, seconds)
            try:
                for match in _compiled(pattern).finditer(text, timeout=left):
                    if match.end() > match.start():  # an empty match redacts nothing
                        spans.append((match.start(), match.end()))
            except TimeoutError:
                raise TooSlow(pattern, seconds) from None
        found.append(spans)
    return found
