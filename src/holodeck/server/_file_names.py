"""File names made from agent names (request logs, uploaded archives): one name, one file.

`weather` stays `weather`; any other character is escaped as `_` and its UTF-8 bytes in hex
(`a b` -> `a_20b`), and `_` itself as `__` (`a_b` -> `a__b`), so two names never share a
file. A stem past 80 characters is cut and ends in `~` and a hash of the whole name (`~`
appears in no other stem), so it fits any file system's limit on a name's length.
"""

from __future__ import annotations

import hashlib
import string

_PLAIN = frozenset(string.ascii_letters + string.digits + "-")
_MAX_STEM = 80


def file_stem(name: str) -> str:
    """The part of a file name that stands for the agent `name`."""
    parts = []
    for char in name:
        if char in _PLAIN:
            parts.append(char)
        elif char == "_":
            parts.append("__")
        else:
            parts.append("".join(f"_{byte:02x}" for byte in char.encode("utf-8", "replace")))
    stem = "".join(parts)
    if len(stem) > _MAX_STEM:
        stem = stem[:60] + "~" + hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:16]
    return stem
