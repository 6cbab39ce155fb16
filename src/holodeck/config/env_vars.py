"""The variables an agent sees: the process environment over the agent's `.env`.
(`${VAR}` references are expanded with them by `holodeck.spec.env_references`.)"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dotenv import dotenv_values


def read_dotenv(directory: Path) -> dict[str, str]:
    """Variables from `directory/.env`, or nothing when there is no such file."""
    path = directory / ".env"
    if not path.is_file():
        return {}

    return {k: v for k, v in dotenv_values(path).items() if v is not None}


def environment_for(directory: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables an agent in `directory` sees: `.env` first, the process overrides it."""
    env = read_dotenv(directory)
    env.update(os.environ if base is None else base)
    return env
