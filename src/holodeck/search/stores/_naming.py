"""Collection names each backend accepts: the caller's name kept readable where it can
be, with a short hash of the original whenever characters had to go (so two names never
meet in one)."""

from __future__ import annotations

import hashlib
import re


def safe_name(collection: str, *, allowed: str = r"A-Za-z0-9_", max_len: int = 48) -> str:
    """`collection` reduced to the `allowed` characters (a regex class body), at most
    `max_len` long, starting and ending with a letter or digit."""
    cleaned = re.sub(rf"[^{allowed}]+", "_", collection).strip("_.-")
    if cleaned == collection and 3 <= len(cleaned) <= max_len and cleaned[0].isalnum():
        return cleaned
    digest = hashlib.sha256(collection.encode()).hexdigest()[:10]
    head = cleaned[: max_len - len(digest) - 1].strip("_.-")
    return f"{head}_{digest}" if head and head[0].isalnum() else f"c{digest}"
