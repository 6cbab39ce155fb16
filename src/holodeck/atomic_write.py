"""Files written whole or not at all: a crash, a full disk or Ctrl+C never leaves half a
file where a reader (a resumed chat, `--compare`, a replay, an unpacker) would find it.

    >>> from pathlib import Path
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "run.json"
    >>> write_atomically(target, b"{}")
    >>> target.read_bytes()
    b'{}'
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def atomic_writer(path: Path, *, mode: int = 0o644) -> Iterator[IO[bytes]]:
    """A binary file that becomes `path` when the block ends without an error.

    The data is written to a temporary file beside `path`, flushed to disk, then renamed
    over `path`; on an error the temporary file is removed and `path` is untouched."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    temporary = Path(name)
    try:
        with os.fdopen(handle, "wb") as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        temporary.chmod(mode)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_atomically(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace `path` with `data`, whole or not at all."""
    with atomic_writer(path, mode=mode) as file:
        file.write(data)
