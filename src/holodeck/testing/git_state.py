"""The git commit an agent was tested at, and whether tracked files had changed since.

One `git status` process answers both (`--porcelain=v2 --branch` prints the commit as
`# branch.oid`). Untracked files do not count as changes: a run's own outputs (saved
runs under .holodeck/, reports, cassettes) are untracked, and would otherwise mark every
run after the first as dirty. No git, no repository, no commit yet, or git taking longer
than `TIMEOUT_S`: None, never a failed run.

    >>> git_state(Path("/")) is None
    True
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from holodeck.testing.results import GitState

TIMEOUT_S = 5.0


def git_state(directory: Path) -> GitState | None:
    """The repository holding `directory`: its HEAD commit and dirty flag, or None."""
    try:
        done = subprocess.run(
            ["git", "status", "--porcelain=v2", "--branch", "--untracked-files=no"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            # never ask for credentials or wait on a lock held by an editor
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"},
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    commit, dirty = None, False
    for line in done.stdout.splitlines():
        if line.startswith("# branch.oid "):
            commit = line.removeprefix("# branch.oid ").strip()
        elif line and not line.startswith("#"):
            dirty = True
    if not commit or commit == "(initial)":
        return None
    return GitState(commit=commit, dirty=dirty)
