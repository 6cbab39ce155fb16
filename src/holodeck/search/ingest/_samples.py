"""The start of a structured file: enough to know its fields without reading it all."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any, BinaryIO

from holodeck.search.ingest._formats import decode, too_deep
from holodeck.search.ingest._records import csv_header

BLOCK = 1 << 16
_WHOLE = 4 << 20  # JSON files up to this size are parsed whole


def read_head(path: Path) -> tuple[bytes, bool]:
    """The first block of a file, and whether it is the whole file."""
    with path.open("rb") as stream:
        head = stream.read(BLOCK + 1)
    return head[:BLOCK], len(head) <= BLOCK


def csv_names(path: Path) -> list[str]:
    """The column names of a CSV file, from its first block."""
    head, complete = read_head(path)
    text, _ = decode(head)
    if not complete:
        text = text[: text.rfind("\n") + 1]
    return csv_header(text)


def jsonl_sample(path: Path, limit: int) -> list[Any]:
    """The first `limit` values of a JSON lines file (lines that do not parse are left out)."""
    values: list[Any] = []
    with path.open("rb") as stream:
        for line in stream:
            if len(values) >= limit:
                break
            if line.strip():
                try:
                    values.append(json.loads(line))
                except (ValueError, RecursionError):
                    continue
    return values


def json_sample(path: Path, limit: int) -> Any:
    """A JSON document; for a large top-level list, its first `limit` elements only.

    Raises `ValueError` (with the position) when the part read is not valid JSON."""
    try:
        return _json_sample(path, limit)
    except RecursionError:
        raise ValueError(too_deep()) from None


def _json_sample(path: Path, limit: int) -> Any:
    if path.stat().st_size <= _WHOLE:
        return json.loads(decode(path.read_bytes())[0])
    with path.open("rb") as stream:
        reader = _Reader(stream)
        buffer = reader.more().lstrip()
        if not buffer.startswith("["):
            return json.loads(buffer + reader.rest())
        return _list_prefix(reader, buffer, limit)


class _Reader:
    """Text from a binary stream, block by block (a character cut between blocks is kept)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")

    def more(self) -> str:
        block = self.stream.read(BLOCK)
        return self.decoder.decode(block, final=not block)

    def rest(self) -> str:
        return self.decoder.decode(self.stream.read(), final=True)


def _list_prefix(reader: _Reader, buffer: str, limit: int) -> list[Any]:
    """Decode elements of a JSON list one by one, reading more of the file as needed."""
    decoder = json.JSONDecoder()
    items: list[Any] = []
    position = 1
    ended = False
    while len(items) < limit:
        while position < len(buffer) and buffer[position] in " \t\r\n,":
            position += 1
        if position < len(buffer) and buffer[position] == "]":
            return items
        try:
            value, end = decoder.raw_decode(buffer, position)
            if end < len(buffer) or ended:
                items.append(value)
                position = end
                continue
        except json.JSONDecodeError:
            if ended:
                raise
        more = reader.more()
        ended = not more
        buffer = buffer[position:] + more
        position = 0
    return items
