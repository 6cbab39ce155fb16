"""Paths the model names, resolved inside the workspace: absolute paths, `..` and symlinks
that lead out of it are refused."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from holodeck.tools.workspace._errors import WorkspaceError


def inside(root: Path, path: Path) -> bool:
    """Whether `path` (resolved) is `root` or below it."""
    return path == root or root in path.parents


def resolve(root: Path, name: str) -> Path:
    """`name` (relative to the workspace `root`, which is resolved) as a real path in it."""
    given = PurePosixPath(name.strip() or ".")
    if given.is_absolute():
        raise WorkspaceError(
            f"{name}: absolute paths are refused; give a path relative to the workspace"
        )
    if ".." in given.parts:
        raise WorkspaceError(f"{name}: `..` is refused; paths stay inside the workspace")
    real = (root / given).resolve()
    if not inside(root, real):
        raise WorkspaceError(f"{name}: a symlink leads outside the workspace; it is refused")
    return real


def relative(root: Path, path: Path) -> str:
    """How the model sees `path`: relative to the workspace, with `/`."""
    return path.relative_to(root).as_posix() if path != root else "."
