"""Unpacking agent image `.tar.gz` archives safely (packing: `archive_pack`).

Unpacking treats the archive as hostile. Every member is checked before it is
written, contents are copied with bounded reads, and everything lands in a
private staging directory that is renamed into place only once the whole
archive has been read and found good: a refused archive leaves nothing behind.

Over 450 lines on purpose: every check an archive passes on its way to disk is in this one
file, so a reviewer of the unpacking reads it whole.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import IO, NoReturn

from holodeck.spec.diagnostics import Diagnostic, SpecError

MiB = 1024 * 1024

DEFAULT_MAX_MEMBERS = 10_000
DEFAULT_MAX_TOTAL_BYTES = 512 * MiB
DEFAULT_MAX_MEMBER_BYTES = 128 * MiB

CONFIG_FILE = "config.yaml"

_CHUNK = 64 * 1024
# tarfile reads a pax or GNU long-name header in a single call; cap it so a
# forged header cannot make us allocate gigabytes before any check runs.
_MAX_SINGLE_READ = 1 * MiB
# Allowance per member for header blocks, long names and padding, used to bound
# how far the decompressed stream may run beyond the declared file sizes.
_OVERHEAD_PER_MEMBER = 8 * 1024
_TRAILER_ALLOWANCE = 1 * MiB

_MAX_NAME_BYTES = 255  # one file or folder name, on the file systems in use
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)

_SPECIAL_TYPES = {
    tarfile.SYMTYPE: "a symbolic link",
    tarfile.LNKTYPE: "a hard link",
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a FIFO (named pipe)",
}


# --------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------


def human_size(size: int) -> str:
    """`1536` -> `1.5 KiB`; exact bytes below 1 KiB."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"


def quoted_name(name: str) -> str:
    """Quote a path for a message; escape control characters a hostile name may carry."""
    return f"`{name}`" if name.isprintable() else repr(name)


def refuse(file: Path, message: str, hint: str | None = None) -> NoReturn:
    raise SpecError([Diagnostic(message, file=file, hint=hint)])


class ArchiveTooLarge(SpecError):
    """The archive is over a size or file-count limit (as opposed to unsafe or corrupt)."""


def refuse_size(file: Path, message: str, hint: str | None = None) -> NoReturn:
    raise ArchiveTooLarge([Diagnostic(message, file=file, hint=hint)])


# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Limits:
    max_members: int
    max_total_bytes: int
    max_member_bytes: int

    @property
    def stream_budget(self) -> int:
        """Most decompressed tar bytes a legitimate archive within these limits can hold."""
        overhead = (self.max_members + 2) * _OVERHEAD_PER_MEMBER
        return self.max_total_bytes + overhead + _TRAILER_ALLOWANCE


_DEFAULT_LIMITS = _Limits(DEFAULT_MAX_MEMBERS, DEFAULT_MAX_TOTAL_BYTES, DEFAULT_MAX_MEMBER_BYTES)


class _BoundedStream:
    """The decompressed tar stream, refusing to run past a byte budget.

    tarfile reads extended headers in one call and seeks over member data, so
    both reads and seeks are checked here before memory or time is spent.
    """

    def __init__(self, inner: gzip.GzipFile, budget: int, archive: Path) -> None:
        self._inner = inner
        self._budget = budget
        self._archive = archive

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._inner.tell()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET and offset > self._budget:
            self._too_big()
        return self._inner.seek(offset, whence)

    def read(self, size: int, /) -> bytes:
        if size < 0 or size > _MAX_SINGLE_READ:
            refuse(
                self._archive,
                f"archive has a header block of {size} bytes, over the "
                f"{human_size(_MAX_SINGLE_READ)} allowed",
                hint="the archive is corrupt or was built to exhaust memory",
            )
        data = self._inner.read(size)
        if self._inner.tell() > self._budget:
            self._too_big()
        return data

    def write(self, data: bytes, /) -> int:
        raise io.UnsupportedOperation("read-only stream")

    def close(self) -> None:
        """The underlying gzip stream is closed by its owner."""

    def _too_big(self) -> NoReturn:
        refuse_size(
            self._archive,
            f"archive expands to more than {human_size(self._budget)} of tar data",
            hint="it holds far more than its members declare: corrupt, or a decompression bomb",
        )


def extract_image(
    archive: Path,
    dest: Path,
    *,
    max_members: int = DEFAULT_MAX_MEMBERS,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
    max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES,
) -> Path:
    """Safely unpack the image `archive` into `dest` and return the image root.

    The root is `dest` itself, or `dest/<folder>` when the archive wraps the
    whole image in one top-level folder. `dest` must not exist or be empty.
    Any unsafe or malformed member raises `SpecError` and leaves `dest` untouched.
    """
    limits = _Limits(max_members, max_total_bytes, max_member_bytes)
    _check_destination(dest)
    staging, wrapper = _extract_to_staging(archive, dest.parent, limits)
    try:
        if dest.is_dir():
            dest.rmdir()  # checked empty above; rename cannot replace it everywhere
        staging.replace(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return dest / wrapper if wrapper else dest


def cached_extract(archive: Path, cache_root: Path) -> Path:
    """Unpack `archive` once per content into `cache_root/<sha256>/`; return the image root.

    Concurrent callers each extract into their own staging directory; the first
    rename wins and the others discard their copy and use the winner's.
    """
    _require_archive(archive)
    target = cache_root / _sha256_of(archive)
    if not target.is_dir():
        cache_root.mkdir(parents=True, exist_ok=True)
        staging, _ = _extract_to_staging(archive, cache_root, _DEFAULT_LIMITS)
        try:
            staging.rename(target)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if not target.is_dir():
                raise
    root = _find_image_root(target)
    if root is None:
        refuse(
            target,
            f"cached image has no {CONFIG_FILE}",
            hint="the cache entry was modified; delete this directory and try again",
        )
    return root


def _require_archive(archive: Path) -> None:
    if not archive.is_file():
        what = "does not exist" if not archive.exists() else "is not a file"
        refuse(archive, f"archive {what}", hint="pass a .tar.gz made by `holodeck pack`")


def _check_destination(dest: Path) -> None:
    if dest.exists() and not (dest.is_dir() and not any(dest.iterdir())):
        refuse(
            dest,
            "destination already exists and is not an empty directory",
            hint="choose a new directory, or remove this one first",
        )


def _sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _extract_to_staging(archive: Path, parent: Path, limits: _Limits) -> tuple[Path, str | None]:
    """Unpack into a fresh directory under `parent`; return it and the wrapping folder name."""
    _require_archive(archive)
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".holodeck-extract-", suffix=".partial", dir=parent))
    try:
        staging.chmod(0o755)
        _unpack(archive, staging, limits)
        root = _find_image_root(staging)
        if root is None:
            refuse(
                archive,
                f"archive has no {CONFIG_FILE} at its root",
                hint="pack the image directory itself with `holodeck pack DIR`, or wrap "
                f"everything in one top-level folder that contains {CONFIG_FILE}",
            )
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging, (root.name if root != staging else None)


def _find_image_root(directory: Path) -> Path | None:
    if (directory / CONFIG_FILE).is_file():
        return directory
    children = list(directory.iterdir())
    if len(children) == 1:
        only = children[0]
        if only.is_dir() and not only.is_symlink() and (only / CONFIG_FILE).is_file():
            return only
    return None


def _unpack(archive: Path, staging: Path, limits: _Limits) -> None:
    """Read the archive, translating decoder failures into one clear diagnostic."""
    unpacker = _Unpacker(archive, staging, limits)
    try:
        with archive.open("rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
            stream = _BoundedStream(gz, limits.stream_budget, archive)
            # "r:" (not "r:*"): no format guessing, and the stream is our bounded view.
            with tarfile.open(fileobj=stream, mode="r:") as tar:
                unpacker.run(tar)
                _check_archive_end(tar, stream, archive, unpacker.where())
    except gzip.BadGzipFile as exc:
        refuse(
            archive,
            f"not a valid gzip-compressed tar archive ({exc})",
            hint="agent image archives are .tar.gz files made by `holodeck pack`",
        )
    except EOFError:
        refuse(archive, f"archive is truncated: the compressed data ends early{unpacker.where()}")
    except zlib.error as exc:
        refuse(archive, f"archive is corrupt: bad compressed data ({exc}){unpacker.where()}")
    except tarfile.TarError as exc:
        if "unexpected end of data" in str(exc):
            refuse(archive, f"archive is truncated: data ends early{unpacker.where()}")
        refuse(
            archive,
            f"not a valid tar archive ({exc}){unpacker.where()}",
            hint="agent image archives are .tar.gz files made by `holodeck pack`",
        )


def _check_archive_end(
    tar: tarfile.TarFile, stream: _BoundedStream, archive: Path, where: str
) -> None:
    """tarfile stops quietly at an unreadable header; insist on a real end-of-archive marker.

    This catches truncation at a block boundary and headers whose size field is
    wrong (the next "header" is then file data). Draining to the end also makes
    gzip verify its checksum and length trailer.
    """
    stream.seek(tar.offset)
    block = stream.read(tarfile.BLOCKSIZE)
    if len(block) < tarfile.BLOCKSIZE:
        refuse(archive, f"archive is truncated: no end-of-archive marker{where}")
    if block.strip(b"\0"):
        refuse(
            archive,
            f"archive has an unreadable header at byte {tar.offset}{where}",
            hint="the archive is corrupt, or a member's header declares the wrong size",
        )
    while chunk := stream.read(_CHUNK):
        if chunk.strip(b"\0"):
            refuse(archive, "archive has unexpected data after its end-of-archive marker")


class _Unpacker:
    """Checks each member in archive order and writes the safe ones under `staging`."""

    def __init__(self, archive: Path, staging: Path, limits: _Limits) -> None:
        self.archive = archive
        self.staging = staging
        self.limits = limits
        self.count = 0
        self.declared_bytes = 0
        self.written_bytes = 0
        self.explicit: set[str] = set()  # names that appeared as members
        self.dirs: set[str] = set()  # directories, explicit or implied by a member path
        self.files: set[str] = set()
        self.last_member: str | None = None

    def where(self) -> str:
        """Context for stream errors: the member being read when things went wrong."""
        return f" (at or after member {quoted_name(self.last_member)})" if self.last_member else ""

    def run(self, tar: tarfile.TarFile) -> None:
        for info in tar:
            self.last_member = info.name
            self.count += 1
            if self.count > self.limits.max_members:
                self.refuse_size(
                    info.name,
                    f"is past the limit of {self.limits.max_members} members",
                    hint="the archive has too many files",
                )
            name = self.safe_name(info)
            self.check_type(info)
            if name is None:
                continue  # the `./` entry for the root itself
            self.claim(name, info.isdir())
            if info.isdir():
                self.make_dir(name, self.staging / name)
            else:
                self.check_declared_size(info)
                self.write_file(tar, info, name)

    def refuse(self, member: str, problem: str, hint: str | None = None) -> NoReturn:
        refuse(self.archive, f"member {quoted_name(member)} {problem}", hint=hint)

    def refuse_size(self, member: str, problem: str, hint: str | None = None) -> NoReturn:
        refuse_size(self.archive, f"member {quoted_name(member)} {problem}", hint=hint)

    def safe_name(self, info: tarfile.TarInfo) -> str | None:
        """The member's normalised relative path, or None for the root directory entry."""
        raw = info.name
        if "\0" in raw or "\\" in raw:
            self.refuse(raw, "has a NUL or backslash in its name", hint="unsafe member name")
        if raw.startswith("/") or PureWindowsPath(raw).drive:
            self.refuse(
                raw, "has an absolute path", hint="members must be relative to the image root"
            )
        parts = [part for part in raw.split("/") if part not in ("", ".")]
        if ".." in parts:
            self.refuse(
                raw,
                "has a `..` path component",
                hint="members may not point outside the image",
            )
        if not parts and not info.isdir():
            self.refuse(raw, "has an empty name")
        if any(len(part.encode("utf-8", "surrogateescape")) > _MAX_NAME_BYTES for part in parts):
            self.refuse(
                raw[:80] + "...",
                f"has a file or folder name longer than {_MAX_NAME_BYTES} bytes",
                hint="file systems cannot hold such a name: shorten it",
            )
        return "/".join(parts) or None

    def check_type(self, info: tarfile.TarInfo) -> None:
        kind = _SPECIAL_TYPES.get(info.type)
        if kind is not None:
            target = f" to {quoted_name(info.linkname)}" if info.issym() or info.islnk() else ""
            self.refuse(
                info.name,
                f"is {kind}{target}",
                hint="only regular files and directories are allowed in an agent image",
            )
        # Sparse and continuation members are "regular" to tarfile but not plain data.
        if not (info.isdir() or info.type in (tarfile.REGTYPE, tarfile.AREGTYPE)):
            self.refuse(
                info.name,
                f"has unsupported type {info.type!r}",
                hint="only regular files and directories are allowed in an agent image",
            )

    def claim(self, name: str, is_dir: bool) -> None:
        """Refuse duplicates and file/directory clashes before anything is written."""
        if name in self.explicit:
            self.refuse(name, "appears more than once in the archive")
        parts = name.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in self.files:
                self.refuse(name, f"lies inside {quoted_name(parent)}, which is a file")
            self.dirs.add(parent)
        if not is_dir and name in self.dirs:
            self.refuse(name, "is a file but other members use it as a directory")
        self.explicit.add(name)
        (self.dirs if is_dir else self.files).add(name)

    def check_declared_size(self, info: tarfile.TarInfo) -> None:
        if info.size > self.limits.max_member_bytes:
            self.refuse_size(
                info.name,
                f"is {human_size(info.size)}, over the "
                f"{human_size(self.limits.max_member_bytes)} limit for one file",
            )
        self.declared_bytes += info.size
        if self.declared_bytes > self.limits.max_total_bytes:
            self.too_much(info.name)

    def too_much(self, member: str) -> NoReturn:
        self.refuse_size(
            member,
            f"takes the archive past the {human_size(self.limits.max_total_bytes)} "
            "limit for total unpacked size",
        )

    def make_dir(self, name: str, path: Path) -> None:
        try:
            path.mkdir(mode=0o755, parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            # Only reachable on case-insensitive filesystems (`A` vs `a/`).
            self.refuse(name, "collides with another member on this filesystem")
        except OSError as exc:  # a path too long for this file system, say
            self.refuse(name, f"cannot be unpacked here: {exc.strerror}")

    def write_file(self, tar: tarfile.TarFile, info: tarfile.TarInfo, name: str) -> None:
        target = self.staging / name
        self.make_dir(name, target.parent)
        mode = 0o755 if info.mode & 0o111 else 0o644
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_BINARY
        try:
            fd = os.open(target, flags, mode)
        except FileExistsError:
            self.refuse(name, "collides with another member on this filesystem")
        except OSError as exc:
            self.refuse(name, f"cannot be unpacked here: {exc.strerror}")
        source = tar.extractfile(info)
        if source is None:  # excluded by check_type; keeps the type checker honest
            self.refuse(name, "has no data")
        with os.fdopen(fd, "wb") as out, source:
            self.copy(source, out, info)

    def copy(self, source: IO[bytes], out: IO[bytes], info: tarfile.TarInfo) -> None:
        """Count the bytes really written as well: a header's size field is only a claim."""
        written = 0
        while chunk := source.read(_CHUNK):
            written += len(chunk)
            self.written_bytes += len(chunk)
            if written > info.size or written > self.limits.max_member_bytes:
                self.refuse(
                    info.name,
                    f"holds more data than its header declares ({info.size} bytes)",
                )
            if self.written_bytes > self.limits.max_total_bytes:
                self.too_much(info.name)
            out.write(chunk)
