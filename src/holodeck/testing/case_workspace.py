"""Each test case's own workspace: a fresh copy of the agent's workspace (or of the case's
`workspace.from`), with the case's `workspace.files` written in, made before the case runs
and removed after it; and the check of `expected_files` against it afterwards. Cases run
at once, so none sees another's files, and the agent's own folder is left as it was."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.case_workspace import ExpectedFiles
from holodeck.spec.models.cases import TestCase
from holodeck.testing.results import FileCheck

# HoloDeck's own state, the repository's history and installed dependencies are no
# case's business, and copying them for every case would cost the most
NOT_COPIED = (".holodeck", ".git", ".venv", "node_modules", "__pycache__")
QUOTED_CHARS = 60


@contextmanager
def case_workspace(spec: AgentSpec, case: TestCase) -> Iterator[Path | None]:
    """The folder `case` runs in (None for an agent without acting tools)."""
    if spec.workspace is None:
        yield None
        return
    given = case.workspace
    source = spec.root / (given.from_ if given and given.from_ else spec.workspace.path or ".")
    with tempfile.TemporaryDirectory(prefix="holodeck-case-") as made:
        folder = Path(made) / "workspace"
        shutil.copytree(
            source.resolve(),
            folder,
            symlinks=True,  # a link stays a link: the tools' own checks refuse those leading out
            ignore=shutil.ignore_patterns(*NOT_COPIED),
        )
        for relative, text in (given.files if given else {}).items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        yield folder


def check_files(folder: Path, expected: ExpectedFiles) -> FileCheck:
    """How the files in `folder` compare with `expected`, one problem line per file."""
    problems = []
    for relative, wanted in expected.items():
        path = folder / relative
        if not wanted.exists:
            if path.exists() or path.is_symlink():
                problems.append(f"{relative}: exists, expected no such file")
            continue
        if not path.is_file():
            problems.append(f"{relative}: no such file")
            continue
        real, root = path.resolve(), folder.resolve()
        if root not in real.parents:  # a link the model made: what it points at is not read
            problems.append(f"{relative}: a symlink leading outside the workspace")
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if wanted.equals is not None and text != wanted.equals:
            problems.append(f"{relative}: differs from the expected text; it holds {_quoted(text)}")
        if wanted.contains is not None and wanted.contains not in text:
            problems.append(f"{relative}: does not contain {_quoted(wanted.contains)}")
    return FileCheck(passed=not problems, checked=len(expected), problems=problems)


def _quoted(text: str) -> str:
    short = text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…"
    return repr(short)
