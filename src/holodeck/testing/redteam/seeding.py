"""What a scan makes the agent's tools return: an attack's document (indirect injection)
or canary record (PII leakage), appended to the tool's real result.

The scan adds `seed_hook.py` (beside this file) to the agent's `middleware:`; its
`after_tool` is the one here, and reads the attack of the task running the turn, so
attacks running at once on one agent each seed their own calls. Only the calls of the
agent under test are seeded, not its sub-agents'.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from holodeck.tools.middleware import ToolCall

HOOK = Path(__file__).with_name("seed_hook.py")

_SEEDED: ContextVar[str | None] = ContextVar("redteam_seeded", default=None)


@contextmanager
def seeding(text: str | None) -> Iterator[None]:
    """Within this block, each tool the agent calls returns `text` after its result."""
    token = _SEEDED.set(text)
    try:
        yield
    finally:
        _SEEDED.reset(token)


def after_tool(call: ToolCall, result: Any) -> Any:
    """The tool's result with the attack's text after it (middleware's `after_tool`)."""
    text = _SEEDED.get()
    if text is None or call.agent:
        return result
    shown = result if isinstance(result, str) else json.dumps(result, default=str)
    return f"{shown}\n\n{text}"
