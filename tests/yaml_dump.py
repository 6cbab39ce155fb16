"""Build agent.yaml text from data in tests."""

from __future__ import annotations

import io
from typing import Any


def minimal() -> dict[str, Any]:
    return {
        "name": "demo",
        "model": {"provider": "openai", "name": "gpt-4o-mini"},
        "instructions": {"inline": "You are helpful."},
    }


def dump(data: dict[str, Any]) -> str:
    from ruamel.yaml import YAML

    out = io.StringIO()
    YAML(typ="safe", pure=True).dump(data, out)
    return out.getvalue()
