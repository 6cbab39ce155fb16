"""The offline `test` model playing a simulated user: it says the lines of the case's
`plan` in order, then stops with `goal_met`.

The test runner sets the lines for one conversation (`scripted_user`); the offline model,
asked for the user's next move (an answer through the `USER_TOOL` tool), takes the next
line. The lines live in a context variable, never in a prompt, so the agent under test
(which the same offline model may play) cannot see them.

    >>> with scripted_user(["Hello", "Thanks"]):
    ...     [next_move()["action"] for _ in range(3)]
    ['message', 'message', 'stop']
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

USER_TOOL = "user_turn"  # the tool through which a simulated user gives its next move


@dataclass
class _Lines:
    lines: tuple[str, ...]
    said: int = 0


_LINES: ContextVar[_Lines | None] = ContextVar("holodeck_user_lines", default=None)


@contextlib.contextmanager
def scripted_user(lines: Sequence[str]) -> Iterator[None]:
    """Within this block the offline user says `lines`, one per move, then stops."""
    token = _LINES.set(_Lines(tuple(lines)))
    try:
        yield
    finally:
        _LINES.reset(token)


def next_move() -> dict[str, Any]:
    """The offline user's next move, as the arguments of `USER_TOOL`."""
    script = _LINES.get()
    if script is None or script.said >= len(script.lines):
        return {
            "action": "stop",
            "reason": "goal_met",
            "explanation": "the offline user said every line of its plan",
        }
    line = script.lines[script.said]
    script.said += 1
    return {"action": "message", "message": line}
