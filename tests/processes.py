"""The processes a test can see in /proc: what a sandbox or a terminal left running."""

from __future__ import annotations

import os
from pathlib import Path


def running(marker: str) -> list[int]:
    """Processes (not this one) whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue  # gone, or not ours to read
    return found
