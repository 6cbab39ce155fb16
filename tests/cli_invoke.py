"""`holodeck` commands run in this process by click's test runner, from a chosen folder."""

from __future__ import annotations

import contextlib
from pathlib import Path

from click.testing import CliRunner, Result

from holodeck.cli.main import cli


def invoke(*args: str, cwd: Path | None = None) -> Result:
    """`holodeck ARGS...` run in `cwd` (this process's folder when None)."""
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        return CliRunner().invoke(cli, list(args))
