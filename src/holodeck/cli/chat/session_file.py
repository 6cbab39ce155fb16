"""The `--session` file of a terminal chat: read, written whole (0600), and locked while a
turn runs, so several `holodeck chat --session F` processes take turns on one file and
none loses another's turn.

The lock is an advisory `flock` on a file beside it (`.F.lock`): the session file
itself is replaced at each save, so a lock on it would be a lock on an old copy. The
kernel frees the lock when its process ends, however it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

from holodeck.atomic_write import write_atomically
from holodeck.errors import InputError
from holodeck.private_files import private_opener

# How long a turn waits for another process's turn on the same file.
LOCK_WAIT_S = 600.0
_POLL_S = 0.05


class SessionFileError(InputError):
    """A session file cannot be read, written or locked."""


class SessionFile:
    """One `--session` file; knows which version of it this process last read or wrote."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = path.with_name(f".{path.name}.lock")
        self._seen: tuple[int, int, int] | None = None  # inode, mtime, size

    def read(self) -> bytes | None:
        """The file's bytes, None when there is none yet."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SessionFileError(f"{self.path}: cannot read the session: {exc}") from None
        self._seen = self._version()
        return data

    def write(self, data: bytes) -> None:
        try:  # the conversation may be private: only its owner reads the file
            write_atomically(self.path, data, mode=0o600)
        except OSError as exc:
            raise SessionFileError(f"{self.path}: cannot save the session: {exc}") from None
        self._seen = self._version()

    def changed(self) -> bool:
        """True when another process saved the file since this one last read or wrote it."""
        return self._version() != self._seen

    @contextlib.asynccontextmanager
    async def held(self, waiting: Callable[[], None]) -> AsyncIterator[None]:
        """Hold the file's lock for the block; `waiting()` is called once if another
        process holds it first. Cancelling the wait (Ctrl+C) is allowed."""
        handle = self._open_lock()
        try:
            told = False
            deadline = asyncio.get_running_loop().time() + LOCK_WAIT_S
            while not _try_lock(handle):
                if not told:
                    waiting()
                    told = True
                if asyncio.get_running_loop().time() > deadline:
                    raise self._busy()
                await asyncio.sleep(_POLL_S)
            yield
        finally:
            os.close(handle)  # closing frees the lock

    @contextlib.contextmanager
    def held_now(self) -> Iterator[None]:
        """Hold the lock for a quick change (/reset); refused at once when it is busy."""
        handle = self._open_lock()
        try:
            if not _try_lock(handle):
                raise self._busy()
            yield
        finally:
            os.close(handle)

    def _open_lock(self) -> int:
        try:
            return private_opener(self.lock_path, os.O_RDWR | os.O_CREAT)
        except OSError as exc:
            raise SessionFileError(
                f"{self.lock_path}: cannot lock the session: {exc.strerror or exc}",
                hint="give --session a file in a directory you can write to",
            ) from None

    def _busy(self) -> SessionFileError:
        return SessionFileError(
            f"{self.path}: another holodeck chat is still answering in this session",
            hint="wait for its answer, or give --session another file",
        )

    def _version(self) -> tuple[int, int, int] | None:
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size)


def _try_lock(handle: int) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
