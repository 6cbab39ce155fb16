"""Where a source's files are, and how their paths are written in chunks."""

from __future__ import annotations

import os
from pathlib import Path


def relative(path: Path, root: Path) -> str:
    """`path` relative to `root`, with `/` separators (`..` when it lies outside)."""
    return os.path.relpath(path, root).replace(os.sep, "/")


def walk(directory: Path) -> list[Path]:
    """Every file under `directory`, in sorted order, hidden files and directories left out."""
    found: list[Path] = []
    for folder, folders, names in os.walk(directory):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        found.extend(Path(folder, name) for name in sorted(names) if not name.startswith("."))
    return found


def resolve(source: Path, root: Path) -> Path:
    """The source as an absolute path (a relative one is taken from the agent directory)."""
    return source if source.is_absolute() else root / source
