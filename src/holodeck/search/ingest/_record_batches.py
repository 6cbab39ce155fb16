"""Structured files to chunks a batch at a time: a CSV or JSON lines file is read row by
row and line by line, so no more than a batch of its records and chunks is ever held.
A JSON document is parsed whole (its records may lie anywhere in it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from holodeck.search._types import Chunk, IngestIssue
from holodeck.search.ingest._formats import decode, too_deep
from holodeck.search.ingest._json_records import BAD_LINE, normalize
from holodeck.search.ingest._options import IngestOptions
from holodeck.search.ingest._reading import TextLines
from holodeck.search.ingest._record_chunks import RecordChunker, record_chunks
from holodeck.search.ingest._records import RecordSet, csv_records
from holodeck.search.ingest._samples import read_head

Batch = tuple[list[Chunk], list[IngestIssue]]
_GROUP = 64  # records turned into chunks at a time
_NOT_UTF8 = "not valid UTF-8: unreadable bytes were replaced"


def csv_batches(source: str, path: Path, options: IngestOptions, size: int) -> Iterator[Batch]:
    """The chunks of a CSV file, about `size` at a time, read row by row."""
    head, _ = read_head(path)
    found = RecordSet(meta_names=tuple(options.meta or ()))
    chunker = RecordChunker(source, options, found.meta_names)
    lines = TextLines(path)
    records = csv_records(lines, decode(head)[0], found)
    chunks: list[Chunk] = []
    issues: list[IngestIssue] = []
    try:
        while group := list(islice(records, _GROUP)):
            _add(chunker.chunks(group, found.problems), chunks, issues)
            if len(chunks) >= size:
                yield chunks, issues
                chunks, issues = [], []
        _add(chunker.chunks([], found.problems), chunks, issues)  # a row that ended the reading
    finally:
        chunker.close()
    if lines.replaced():
        issues.append(IngestIssue(source, _NOT_UTF8))
    yield chunks, issues


def jsonl_batches(source: str, path: Path, options: IngestOptions, size: int) -> Iterator[Batch]:
    """The chunks of a JSON lines file, about `size` at a time, read line by line."""
    chunker = RecordChunker(source, options, ())
    lines = TextLines(path)
    numbered = ((n, line) for n, line in enumerate(lines, start=1) if line.strip())
    chunks: list[Chunk] = []
    issues: list[IngestIssue] = []
    try:
        yield from _jsonl_groups(chunker, numbered, options, size, chunks, issues)
    finally:
        chunker.close()
    if lines.replaced():
        issues.append(IngestIssue(source, _NOT_UTF8))
    yield chunks, issues


def _jsonl_groups(
    chunker: RecordChunker,
    numbered: Iterator[tuple[int, str]],
    options: IngestOptions,
    size: int,
    chunks: list[Chunk],
    issues: list[IngestIssue],
) -> Iterator[Batch]:
    """Full batches of a JSON lines file; what is left stays in `chunks` and `issues`."""
    first = 0  # the index of the next record
    while group := list(islice(numbered, _GROUP)):
        items: list[Any] = []
        problems: list[tuple[int | None, str]] = []
        for number, line in group:
            try:
                items.append(load_json(line))
            except ValueError as error:
                index = first + len(items) if options.record_path is None else None
                problems.append((index, f"line {number} is not valid JSON: {reason(error)}"))
                items.append(BAD_LINE)
        found = _normalize(items, options, first)
        found.problems[:0] = problems
        chunker.meta_names = found.meta_names
        _add(chunker.chunks(found.records, found.problems), chunks, issues)
        first += len(found.records)
        if len(chunks) >= size:
            yield chunks[:], issues[:]
            chunks.clear()
            issues.clear()


def json_chunks(source: str, text: str, options: IngestOptions) -> Batch:
    """The chunks of a JSON document's records."""
    try:
        data = load_json(text)
    except ValueError as error:
        found = RecordSet(problems=[(None, f"not valid JSON: {reason(error)}")])
    else:
        found = _normalize(data, options, 0)
    return record_chunks(source, found, options)


def load_json(text: str) -> Any:
    """A JSON value (NaN and Infinity are not JSON); `ValueError` says why not."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError(too_deep()) from None


def reason(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno}, column {error.colno}"
    return str(error)


def _add(batch: Batch, chunks: list[Chunk], issues: list[IngestIssue]) -> None:
    chunks.extend(batch[0])
    issues.extend(batch[1])


def _normalize(data: Any, options: IngestOptions, first: int) -> RecordSet:
    return normalize(
        data,
        options.record_path,
        options.meta,
        options.record_prefix,
        options.meta_prefix,
        first,
    )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")
