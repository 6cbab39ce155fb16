"""Packing an agent image directory into a deterministic `.tar.gz`.

Sorted members, zeroed times and owners, normalised modes and gzip without a
timestamp: one directory always gives the same bytes, and so the same cache key.
"""

from __future__ import annotations

import gzip
import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pathspec

from holodeck.atomic_write import atomic_writer
from holodeck.spec.archives.unpack import CONFIG_FILE, quoted_name, refuse
from holodeck.spec.diagnostics import Diagnostic, SpecError

# Never packed, at any depth: VCS data, secrets, caches and local state.
_SKIPPED_DIRS = frozenset({".git", "__pycache__", "node_modules", ".holodeck"})
_CHUNK = 64 * 1024
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)


@dataclass(frozen=True)
class PackResult:
    """What `pack_image` wrote."""

    output: Path
    members: int  # files and directories stored
    total_bytes: int  # uncompressed size of the stored files
    archive_bytes: int  # size of the .tar.gz on disk


@dataclass(frozen=True)
class _Entry:
    rel: str  # posix path relative to the image root
    path: Path
    is_dir: bool


@dataclass(frozen=True)
class _IgnoreFile:
    base: str  # directory holding the .gitignore, relative to the image root
    spec: pathspec.GitIgnoreSpec


def pack_image(source: Path, output: Path) -> PackResult:
    """Write the image directory `source` to `output` as a deterministic .tar.gz."""
    root = _check_image_dir(source)
    entries = _collect_entries(root, output)
    if not any(e.rel == CONFIG_FILE and not e.is_dir for e in entries):
        refuse(
            root / CONFIG_FILE,
            f"{CONFIG_FILE} is excluded from the image",
            hint="remove it from .gitignore",
        )
    total_bytes = _write_archive(entries, output)
    return PackResult(
        output=output,
        members=len(entries),
        total_bytes=total_bytes,
        archive_bytes=output.stat().st_size,
    )


def image_files(root: Path) -> list[tuple[str, Path]]:
    """The files an image of `root` holds, by the rules `pack_image` follows (.gitignore,
    no .env, caches or VCS data; links refused), as (posix path in the image, path)."""
    entries = _collect_entries(root.resolve(), Path(os.devnull))
    return [(entry.rel, entry.path) for entry in entries if not entry.is_dir]


def _check_image_dir(source: Path) -> Path:
    if not source.is_dir():
        what = "does not exist" if not source.exists() else "is not a directory"
        refuse(
            source,
            f"image directory {what}",
            hint=f"pass a directory that contains {CONFIG_FILE}",
        )
    if not (source / CONFIG_FILE).is_file():
        refuse(
            source,
            f"not an agent image: no {CONFIG_FILE} in this directory",
            hint=f"create one with `holodeck init`, or pass the folder that holds {CONFIG_FILE}",
        )
    return source.resolve()


def _collect_entries(root: Path, output: Path) -> list[_Entry]:
    """Walk the image, applying skip and .gitignore rules; refuse links and special files."""
    output_rel = _relative_inside(output, root)
    entries: list[_Entry] = []
    problems: list[Diagnostic] = []
    stack: list[tuple[Path, str, tuple[_IgnoreFile, ...]]] = [(root, "", ())]
    while stack:
        directory, rel_dir, inherited = stack.pop()
        rules = inherited + _load_gitignore(directory, rel_dir)
        with os.scandir(directory) as scan:
            children = sorted(scan, key=lambda child: child.name)
        for child in children:
            rel = f"{rel_dir}/{child.name}" if rel_dir else child.name
            is_dir = child.is_dir(follow_symlinks=False)
            if rel == output_rel or _always_skipped(child.name, is_dir):
                continue
            if _ignored(rel, is_dir, rules):
                continue
            path = Path(child.path)
            if child.is_symlink():
                problems.append(_link_problem(path, rel))
            elif is_dir:
                entries.append(_Entry(rel, path, is_dir=True))
                stack.append((path, rel, rules))
            elif child.is_file(follow_symlinks=False):
                entries.append(_Entry(rel, path, is_dir=False))
            else:
                problems.append(
                    Diagnostic(
                        f"{quoted_name(rel)} is not a regular file or directory",
                        file=path,
                        hint="remove it or add it to .gitignore",
                    )
                )
    if problems:
        raise SpecError(problems)
    entries.sort(key=lambda e: e.rel)
    return entries


def _relative_inside(path: Path, root: Path) -> str | None:
    """`path` relative to `root` as posix text, or None when it lies outside."""
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def _always_skipped(name: str, is_dir: bool) -> bool:
    # `.git` is a file in worktrees and submodules; `.env` may also be a virtualenv folder.
    if name in (".git", ".env") or name.startswith(".env."):
        return True
    if is_dir:
        return name in _SKIPPED_DIRS
    return name.endswith(".pyc")


def _load_gitignore(directory: Path, rel_dir: str) -> tuple[_IgnoreFile, ...]:
    path = directory / ".gitignore"
    if path.is_symlink() or not path.is_file():
        return ()
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError as exc:
        refuse(path, f"cannot read .gitignore pattern: {exc}")
    return (_IgnoreFile(rel_dir, spec),)


def _ignored(rel: str, is_dir: bool, rules: tuple[_IgnoreFile, ...]) -> bool:
    """Git semantics: each .gitignore sees paths relative to its own folder, deeper files win."""
    verdict = False
    for rule in rules:
        local = rel[len(rule.base) + 1 :] if rule.base else rel
        # A trailing slash lets directory-only patterns such as `build/` match.
        result = rule.spec.check_file(local + "/" if is_dir else local)
        if result.include is not None:
            verdict = result.include
    return verdict


def _link_problem(path: Path, rel: str) -> Diagnostic:
    return Diagnostic(
        f"{quoted_name(rel)} is a symbolic link; agent images cannot contain links "
        "(they would be unsafe to unpack)",
        file=path,
        hint="replace the link with a copy of its target, or add it to .gitignore",
    )


def _write_archive(entries: list[_Entry], output: Path) -> int:
    """Write the archive whole or not at all: readers never see half a file."""
    total = 0
    # An empty filename and mtime 0 keep the gzip header free of varying data.
    with (
        atomic_writer(output) as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for entry in entries:
            total += _add_entry(tar, entry)
    return total


def _normalised_info(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _add_entry(tar: tarfile.TarFile, entry: _Entry) -> int:
    info = _normalised_info(entry.rel)
    if entry.is_dir:
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)
        return 0
    # O_NOFOLLOW: the file could have been swapped for a link since the walk.
    fd = os.open(entry.path, os.O_RDONLY | _O_NOFOLLOW | _O_BINARY)
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            refuse(
                entry.path, f"{quoted_name(entry.rel)} stopped being a regular file while packing"
            )
        info.size = st.st_size
        info.mode = 0o755 if st.st_mode & 0o111 else 0o644
        tar.addfile(info, handle)
    return info.size


# --------------------------------------------------------------------------
# Unpacking
