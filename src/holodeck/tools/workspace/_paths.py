"""Paths the model names, resolved inside the workspace: absolute paths, `..` and symlinks
that lead out of it are refused. A file is then opened by walking its resolved path one
folder at a time from the workspace, following no symlink: one swapped in after the check
is refused rather than followed out."""

from __future__ import annotations

import contextlib
import errno
import os
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
    try:
        real = (root / given).resolve()
    except OSError as error:  # the path changed while it was read (a symlink loop, a swap)
        raise WorkspaceError(f"{name}: cannot be resolved ({error.strerror})") from None
    if not inside(root, real):
        raise WorkspaceError(f"{name}: a symlink leads outside the workspace; it is refused")
    return real


def relative(root: Path, path: Path) -> str:
    """How the model sees `path`: relative to the workspace, with `/`."""
    return path.relative_to(root).as_posix() if path != root else "."


_NO_FOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


def open_real(root: Path, real: Path, flags: int, *, make_folders: bool = False) -> int:
    """A file descriptor of `real` (a path `resolve` returned), opened with `flags` by
    walking from `root` with no symlink followed; `make_folders` makes missing folders."""
    parts = real.relative_to(root).parts
    if not parts:
        raise WorkspaceError(".: is the workspace folder, not a file")
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            if make_folders:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=folder)
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | _NO_FOLLOW, dir_fd=folder)
            os.close(folder)
            folder = inner
        return os.open(parts[-1], flags | _NO_FOLLOW, 0o666, dir_fd=folder)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            shown = relative(root, real)
            raise WorkspaceError(
                f"{shown}: a symlink appeared in the path while it was opened; it is refused"
            ) from None
        if error.errno == errno.ENOENT:
            raise WorkspaceError(f"{relative(root, real)}: no such file in the workspace") from None
        raise
    finally:
        os.close(folder)
