"""Files and directories only their owner may read or enter: what a server keeps about
its users (request logs, session databases, its state directory).

Created files are 0600 and created directories 0700 whatever the process's umask (the
mode is set after creation, since a umask can only take bits away and an odd one may
take the owner's). Files and directories that already exist are left as they are: an
operator who opened one up on purpose keeps that choice.

    >>> import stat, tempfile
    >>> from pathlib import Path
    >>> root = Path(tempfile.mkdtemp())
    >>> logs = private_dir(root / "state" / "logs")
    >>> oct(stat.S_IMODE((root / "state").stat().st_mode)), oct(stat.S_IMODE(logs.stat().st_mode))
    ('0o700', '0o700')
    >>> with open(logs / "x.log", "a", opener=private_opener) as file:
    ...     _ = file.write("one line")
    >>> oct(stat.S_IMODE((logs / "x.log").stat().st_mode))
    '0o600'
"""

from __future__ import annotations

import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """`path` as a directory: it and each missing parent are created 0700."""
    missing: list[Path] = []
    current = path
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:  # made meanwhile by another process: theirs to set
            continue
        directory.chmod(DIR_MODE)
    return path


def private_opener(path: str | os.PathLike[str], flags: int) -> int:
    """An `opener` for `open()`: a file it creates is 0600 (its directory is made private
    when missing), an existing one keeps its mode."""
    target = Path(path)
    if flags & os.O_CREAT:
        private_dir(target.parent)
        try:
            fd = os.open(target, flags | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            return os.open(target, flags & ~os.O_CREAT)
        os.fchmod(fd, FILE_MODE)
        return fd
    return os.open(target, flags)


def create_private_file(path: Path) -> Path:
    """`path` as a file, created empty and 0600 when missing (for programs such as SQLite
    that create their files themselves, with the umask's modes)."""
    os.close(private_opener(path, os.O_WRONLY | os.O_CREAT))
    return path
