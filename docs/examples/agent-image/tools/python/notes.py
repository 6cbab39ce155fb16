"""Two public functions, so the tools are `notes_save` and `notes_show`."""

from __future__ import annotations

import json
from pathlib import Path

_STORE = Path.home() / ".paper-scout-notes.json"


def _load() -> list[dict[str, str]]:
    if not _STORE.exists():
        return []
    return list(json.loads(_STORE.read_text(encoding="utf-8")))


def save(title: str, link: str, note: str = "") -> str:
    """Save a paper to the reading list.

    Args:
        title: The paper's title.
        link: Where to read it.
        note: Why it matters.
    """
    notes = _load()
    notes.append({"title": title, "link": link, "note": note})
    _STORE.write_text(json.dumps(notes, indent=2), encoding="utf-8")
    return f"saved ({len(notes)} papers on the list)"


def show() -> list[dict[str, str]]:
    """Return the saved reading list."""
    return _load()
