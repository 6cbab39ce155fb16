"""Omnigent's top-level `compaction:` block in an image's config.yaml, read into
`memory.compaction` where its keys mean the same: `trigger_threshold` (the fraction of
the context window that starts it) is `at`; `recent_window` (the latest messages kept
as they are) becomes `keep_recent` turns, enough to keep at least that many messages (a
turn holds two or more). Its Headroom settings tune a compression of tool results
HoloDeck does not have: warnings. Other keys are errors saying what to write."""

from __future__ import annotations

import math
from typing import Any

from holodeck.spec.image.executor import Report

_WRITE_INSTEAD = (
    "Omnigent's `trigger_threshold` and `recent_window` are read; for the rest write "
    "`memory: {compaction: {at, keep_recent, model}}` (docs/memory.md)"
)


def take_compaction(data: dict[str, Any], report: Report) -> None:
    """Move `compaction:` out of `data` into `data["memory"]["compaction"]`."""
    if "compaction" not in data:
        return
    raw = data.pop("compaction")
    if not isinstance(raw, dict):
        report(
            ("compaction",),
            "`compaction` must be a mapping",
            "e.g. `compaction: {trigger_threshold: 0.8, recent_window: 6}`",
        )
        return
    block: dict[str, Any] = {}
    for key, value in raw.items():
        where = ("compaction", str(key))
        if key == "trigger_threshold":
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
                report(where, "`trigger_threshold` must be a fraction between 0 and 1", None)
            else:
                block["at"] = float(value)
        elif key == "recent_window":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                report(where, "`recent_window` must be a positive number of messages", None)
            else:
                block["keep_recent"] = math.ceil(value / 2)
        elif str(key).startswith("headroom_"):
            report(
                where,
                f"`compaction.{key}` tunes Omnigent's Headroom compression of tool results, "
                "which HoloDeck does not have",
                "remove it",
                warning=True,
            )
        else:
            report(
                where,
                f"`compaction.{key}` is not a compaction setting HoloDeck reads",
                _WRITE_INSTEAD,
            )
    memory = data.get("memory")
    memory = dict(memory) if isinstance(memory, dict) else {}
    if "compaction" in memory:
        report(
            ("compaction",),
            "`compaction` and `memory.compaction` both say how the conversation is compacted",
            "keep `memory.compaction` only",
        )
        return
    memory["compaction"] = block
    data["memory"] = memory
