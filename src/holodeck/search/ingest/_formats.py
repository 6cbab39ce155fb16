"""Which format a source file holds: by its extension, else by its content."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from typing import Literal

Format = Literal["text", "markdown", "pdf", "csv", "json", "jsonl"]
STRUCTURED: frozenset[Format] = frozenset({"csv", "json", "jsonl"})

EXTENSIONS: dict[str, Format] = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".pdf": "pdf",
    ".csv": "csv",
    ".tsv": "csv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
SUPPORTED = ".txt, .md, .pdf, .csv, .json, .jsonl"

_SNIFF_CHARS = 65536
_SNIFF_LINES = 50
# a number as written in a CSV cell (integer, decimal, exponent)
NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_CONTROL = frozenset(range(0, 32)) - {9, 10, 12, 13}


def sniff(data: bytes) -> Format | None:
    """Guess the format from the bytes alone."""
    if data.lstrip()[:4] == b"%PDF":
        return "pdf"
    head = data[:_SNIFF_CHARS]
    if b"\x00" in head or _mostly_control(head):
        return None
    text, _ = decode(data)
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        if _is_json(text):
            return "json"
        if _is_json_lines(stripped[:_SNIFF_CHARS]):
            return "jsonl"
    if looks_like_csv(text[:_SNIFF_CHARS]):
        return "csv"
    return "text"


def sniff_head(head: bytes, complete: bool) -> Format | None:
    """Guess the format from a file's first bytes only (a large file is not read whole);
    `complete` tells whether `head` is the whole file."""
    if head.lstrip()[:4] == b"%PDF":
        return "pdf"
    if b"\x00" in head or _mostly_control(head):
        return None
    text, _ = decode(head)
    starts = text.lstrip()[:1]  # before the cut: a first line longer than the head counts
    if not complete:
        text = text[: text.rfind("\n") + 1]  # drop the line cut in the middle
    if starts in ("{", "["):
        return "jsonl" if _is_json_lines(text.lstrip()[:_SNIFF_CHARS]) else "json"
    return "csv" if looks_like_csv(text[:_SNIFF_CHARS]) else "text"


def too_deep() -> str:
    """Why a JSON value nested past the interpreter's recursion limit is not read."""
    return (
        f"its arrays and objects are nested deeper than about {sys.getrecursionlimit()} "
        "levels, more than can be read"
    )


def decode(data: bytes) -> tuple[str, bool]:
    """The text of `data` as UTF-8 (a BOM dropped), and whether bytes had to be replaced."""
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return data.decode("utf-8-sig", errors="replace"), True


def csv_dialect(sample: str) -> type[csv.Dialect] | csv.Dialect:
    """The dialect the sample is written in (commas when it cannot be told)."""
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel


def looks_like_csv(sample: str) -> bool:
    """Rows of one width (two columns or more) under a header row of column names."""
    if "\n" not in sample.strip():
        return False
    if len(sample) == _SNIFF_CHARS:
        sample = sample[: sample.rfind("\n") + 1]  # drop the row cut in the middle
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
        rows = [row for row in csv.reader(io.StringIO(sample), dialect) if row][:_SNIFF_LINES]
    except csv.Error:
        return False
    if len(rows) < 2 or len(rows[0]) < 2 or any(len(row) != len(rows[0]) for row in rows):
        return False
    header = [cell.strip() for cell in rows[0]]
    return len(set(header)) == len(header) and all(_column_name(cell) for cell in header)


def _column_name(cell: str) -> bool:
    return (
        0 < len(cell) <= 64
        and len(cell.split()) <= 6
        and not NUMBER.match(cell)
        and not cell.endswith((".", "!", "?"))
    )


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except RecursionError:
        return True  # JSON too deep to read: reading it as JSON says so
    except ValueError:
        return False
    return True


def _is_json_lines(text: str) -> bool:
    lines = [line for line in text.splitlines()[:_SNIFF_LINES] if line.strip()]
    if len(text) == _SNIFF_CHARS:
        lines = lines[:-1]  # the last line may be cut in the middle
    if len(lines) < 2:
        return False
    for line in lines:
        try:
            json.loads(line)
        except (ValueError, RecursionError):
            return False
    return True


def _mostly_control(head: bytes) -> bool:
    """Binary data that happens to hold no NUL byte in its first block."""
    if not head:
        return False
    controls = sum(1 for byte in head if byte in _CONTROL)
    return controls * 10 > len(head)
