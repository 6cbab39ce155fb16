"""Records read from structured files: one flat mapping of field name -> value each.

CSV cells are typed the way a reader of the table would ("12" is a number, "true" a
boolean, an empty cell nothing); text stays text.

    >>> [typed(cell) for cell in ("12", "3.5", "TRUE", "", "007", "Ada")]
    [12, 3.5, True, None, '007', 'Ada']
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from holodeck.search.ingest._formats import NUMBER, csv_dialect

_INTEGER = re.compile(r"^[+-]?(0|[1-9]\d*)$")
_LEADING_ZERO = re.compile(r"^[+-]?0\d")
_BOOLEANS = {"true": True, "false": False}
_SNIFF_CHARS = 65536


@dataclass(slots=True)  # not frozen: thousands are made per file, and frozen init is slow
class Record:
    """One record: its 0-based index, flat fields, and what to rebuild it from."""

    index: int
    fields: dict[str, Any]
    original: Any  # the record as the file holds it (JSON) or its typed row (CSV)
    cells: dict[str, str] | None = None  # CSV: each field's cell as written


@dataclass
class RecordSet:
    """The records of one file, the names copied from outside them, and the problems met."""

    records: list[Record] = field(default_factory=list)
    meta_names: tuple[str, ...] = ()  # fields taken from `meta`: metadata, never embedded
    problems: list[tuple[int | None, str]] = field(default_factory=list)  # (record, message)


def typed(cell: str) -> Any:
    """A CSV cell's value: int, float, bool, None for an empty cell, else the text.

    Integers with leading zeros ("007", zip codes) stay text: they are codes, not counts."""
    value = cell.strip()
    if not value:
        return None
    if value[0].isalpha():  # most text: no number to try
        return _BOOLEANS.get(value.lower(), cell) if len(value) <= 5 else cell
    if _INTEGER.match(value):
        return int(value)
    if NUMBER.match(value) and not _LEADING_ZERO.match(value):
        number = float(value)
        return number if math.isfinite(number) else cell
    return _BOOLEANS.get(value.lower(), cell)


def csv_header(text: str) -> list[str]:
    """The column names of a CSV text (its first non-empty row), named as `csv_records` does."""
    rows = _rows(text)
    return _names(next(rows, []), [])


def csv_records(lines: Iterable[str], sample: str, found: RecordSet) -> Iterator[Record]:
    """The records of CSV `lines` (the header row first), one at a time; `sample` (the
    start of the text) tells the dialect. Problems go to `found.problems` as they are met."""
    reader = csv.reader(lines, csv_dialect(sample))
    rows = (row for row in reader if "".join(row).strip())
    index = 0  # the row being read
    try:
        header = _names(next(rows, []), found.problems)
        for row in rows:
            if len(row) != len(header):
                found.problems.append(
                    (
                        index,
                        f"row {index} has {len(row)} cells, the header has {len(header)}: "
                        + (
                            "the extra cells are ignored"
                            if len(row) > len(header)
                            else "the missing cells are left out"
                        ),
                    )
                )
            cells = dict(zip(header, row, strict=False))
            values = {name: typed(cell) for name, cell in cells.items()}
            yield Record(index, values, values, cells)
            index += 1
    except csv.Error as error:  # e.g. a NUL byte: the rows read so far are kept
        found.problems.append(
            (index, f"row {index} cannot be read ({error}); rows after it are left out")
        )


def _rows(text: str) -> Iterator[list[str]]:
    sample = text[:_SNIFF_CHARS]
    reader = csv.reader(io.StringIO(text, newline=""), csv_dialect(sample))
    return (row for row in reader if "".join(row).strip())


def _names(header: list[str], problems: list[tuple[int | None, str]]) -> list[str]:
    """Column names: blank ones become `column_N`, repeated ones get `.1`, `.2` (as pandas)."""
    names: list[str] = []
    for position, cell in enumerate(header, start=1):
        name = cell.strip() or f"column_{position}"
        if name != cell.strip():
            problems.append((None, f"column {position} has no name; it is called {name!r}"))
        base, count = name, 0
        while name in names:
            count += 1
            name = f"{base}.{count}"
        if count:
            problems.append((None, f"column {base!r} appears twice; the second is {name!r}"))
        names.append(name)
    return names
