"""Reading a source file without holding it: its digest, its format, its lines.

Ingestion keeps memory flat in the size of a file: it is hashed a block at a time, its
format told from its extension or its first block, and records are read line by line."""

from __future__ import annotations

import codecs
import hashlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from holodeck.search.ingest._formats import EXTENSIONS, Format, sniff, sniff_head
from holodeck.search.ingest._samples import read_head

_BLOCK = 1 << 20


def digest(path: Path) -> str:
    """The sha256 of the file's bytes, read a block at a time (raises `OSError`)."""
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def file_format(path: Path) -> Format | None:
    """The format of the file at `path` (None: binary data): its extension decides, else
    its content: the whole of a small file, the first block of a large one."""
    known = EXTENSIONS.get(PurePosixPath(path.name).suffix.lower())
    if known is not None:
        return known
    head, complete = read_head(path)
    return sniff(head) if complete else sniff_head(head, complete=False)


class TextLines:
    """A text file's lines as UTF-8 (a BOM dropped, undecodable bytes replaced), read a
    block at a time; line ends are kept, as `csv.reader` needs them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._suspect = False  # a replacement character was seen

    def __iter__(self) -> Iterator[str]:
        with self.path.open(encoding="utf-8-sig", errors="replace", newline="") as stream:
            for line in stream:
                if "\ufffd" in line:
                    self._suspect = True
                yield line

    def replaced(self) -> bool:
        """Whether bytes were replaced (not a U+FFFD the file itself holds): read after
        the lines, and only a file that showed one is decoded again to tell."""
        return self._suspect and not _valid_utf8(self.path)


def _valid_utf8(path: Path) -> bool:
    decoder = codecs.getincrementaldecoder("utf-8")()
    with path.open("rb") as stream:
        try:
            while block := stream.read(_BLOCK):
                decoder.decode(block)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return False
    return True
