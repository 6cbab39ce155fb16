"""The versions an agent's image installs: the pins of `requirements.lock`, the lock the
project's suite was proven with. The wheel carries it beside this module; a checkout or an
editable install reads it at the project's root. An image built today and one built a
month later from the same holodeck install the same packages."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import holodeck
from holodeck.errors import ExecutionError

LOCK = "requirements.lock"
DISTRIBUTION = "holodeck-agents"


def source_tree() -> Path | None:
    """The project this holodeck runs from (an editable install or a checkout), if any."""
    root = Path(holodeck.__file__).resolve().parents[2]
    project = root / "pyproject.toml"
    if project.is_file() and f'name = "{DISTRIBUTION}"' in project.read_text(encoding="utf-8"):
        return root
    return None


def locked_constraints() -> list[str]:
    """The lock's requirement lines (`name==version`, with their markers), for pip's -c."""
    packaged = resources.files("holodeck.deploy_targets").joinpath(LOCK)
    if packaged.is_file():
        text = packaged.read_text(encoding="utf-8")
    else:
        source = source_tree()
        if source is None or not (source / LOCK).is_file():
            raise ExecutionError(
                f"this holodeck installation carries no {LOCK}: the image's versions "
                "cannot be pinned",
                hint="reinstall holodeck from its wheel or a checkout of its repository",
            )
        text = (source / LOCK).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line[:1].isalnum()]
