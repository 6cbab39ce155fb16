"""Tool names as providers accept them: `<server>_<tool>`, at most 64 characters.

    >>> exposed_name("files", "read.file", taken=set())
    'files_read_file'

Other characters become `_`; a name too long, or already taken, is cut and ends with a
hash of the original.
"""

from __future__ import annotations

import hashlib
import re

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_NAME = 64


def exposed_name(server: str, tool: str, taken: set[str]) -> str:
    """`<server>_<tool>` as providers accept it: other characters become `_`, a name past
    64 characters or already taken is cut and ends with a hash of the original."""
    full = f"{server}_{tool}"
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", full)
    if len(name) > MAX_NAME or name in taken:
        digest = hashlib.sha1(full.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - len(digest) - 1]}_{digest}"
        bump = 0
        while name in taken:  # only if two originals hash alike after cutting
            bump += 1
            digest = hashlib.sha1(f"{full}#{bump}".encode()).hexdigest()[:8]
            name = f"{name[: MAX_NAME - len(digest) - 1]}_{digest}"
    return name
