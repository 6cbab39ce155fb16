"""Records to chunks: the text to embed, the metadata to keep, and the id of each.

The vector fields of a record are joined into one text (chunked when long); every chunk
of a record carries the same id, metadata and the whole record as JSON."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from holodeck.search._types import Chunk, IngestIssue, JsonScalar
from holodeck.search.ingest._chunking import split
from holodeck.search.ingest._options import IngestOptions
from holodeck.search.ingest._records import Record, RecordSet
from holodeck.search.ingest._seen_ids import SeenIds

_JSON = json.JSONEncoder(ensure_ascii=False, default=str)  # one encoder for every record
Metadata = dict[str, JsonScalar | list[JsonScalar]]
_ABSENT: Any = object()  # a field the record does not have (None is a JSON null)


def record_chunks(
    source: str, found: RecordSet, options: IngestOptions
) -> tuple[list[Chunk], list[IngestIssue]]:
    """The chunks of every record that has text to embed, and an issue for each that has not."""
    chunker = RecordChunker(source, options, found.meta_names)
    try:
        return chunker.chunks(found.records, found.problems)
    finally:
        chunker.close()


class RecordChunker:
    """Records to chunks, a batch at a time: ids stay unique and a file-wide problem is
    told once across the whole file, whatever the batches."""

    def __init__(self, source: str, options: IngestOptions, meta_names: tuple[str, ...]) -> None:
        self.source = source
        self.options = options
        self.meta_names = meta_names
        self._ids = SeenIds()  # only with an id_field: row indexes never repeat
        self._told: set[str] = set()  # file-wide problems already told

    def close(self) -> None:
        self._ids.close()

    def chunks(
        self, records: Iterable[Record], problems: list[tuple[int | None, str]]
    ) -> tuple[list[Chunk], list[IngestIssue]]:
        """The chunks of `records`; `problems` met reading them come back as issues, with
        those of the records."""
        source, options, ids = self.source, self.options, self._ids
        chunks: list[Chunk] = []
        not_text = frozenset(self.meta_names) | {options.id_field}  # never embedded by default
        for record in records:
            if record.original is None:
                continue  # unreadable: its problem is already recorded
            texts, embedded = _vector_texts(record, not_text, options, problems)
            if not texts:
                continue
            record_id = _record_id(record, options.id_field, problems)
            key = record_id
            first = ids.claim(record_id, record.index) if options.id_field is not None else None
            if first is not None:
                problems.append(
                    (
                        record.index,
                        f"record {record.index} has the id {record_id!r} of record "
                        f"{first}; its chunks are told apart by its index",
                    )
                )
                key = f"{record_id}@{record.index}"
            metadata = _metadata(record, embedded, self.meta_names, options)
            whole = _JSON.encode(record.original)
            text = options.field_separator.join(texts)
            for position, (start, end) in enumerate(
                split(text, options.chunk_size, options.chunk_overlap)
            ):
                piece = text[start:end]
                chunks.append(
                    Chunk(
                        id=f"{source}#{key}:{position}",
                        text=piece,
                        source=source,
                        position=position,
                        content_hash=hashlib.sha256(piece.encode()).hexdigest(),
                        record_id=record_id,
                        record_index=record.index,
                        metadata=dict(metadata),
                        record=whole,
                    )
                )
        return chunks, self._issues(problems)

    def _issues(self, problems: list[tuple[int | None, str]]) -> list[IngestIssue]:
        """One issue per problem, in the file's order (file-wide ones first): a file-wide
        one (no record) is told once."""
        issues: list[IngestIssue] = []
        for index, message in sorted(problems, key=_in_file_order):
            if index is None:
                if message in self._told:
                    continue
                self._told.add(message)
            issues.append(IngestIssue(self.source, message, index))
        problems.clear()
        return issues


def _in_file_order(problem: tuple[int | None, str]) -> int:
    return -1 if problem[0] is None else problem[0]


def _vector_texts(
    record: Record,
    skip: frozenset[str | None],
    options: IngestOptions,
    problems: list[tuple[int | None, str]],
) -> tuple[list[str], set[str]]:
    """The texts to embed and the names they came from; a problem for each one missing."""
    index = record.index
    if not options.vector_fields:
        names = [
            name
            for name, value in record.fields.items()
            if isinstance(value, str) and value.strip() and name not in skip
        ]
        if not names:
            problems.append((index, f"record {index} has no text field to embed"))
        return [record.fields[name] for name in names], set(names)
    texts: list[str] = []
    used: set[str] = set()
    for name in options.vector_fields:
        value = record.fields.get(name, _ABSENT)
        cell = record.cells.get(name) if record.cells is not None else None
        text = value if isinstance(value, str) else cell  # CSV: "12" in a text column is text
        if text is not None and text.strip():
            texts.append(text)
            used.add(name)
        elif value is _ABSENT:
            problems.append((index, f"record {index} has no field {name!r} to embed"))
        elif value is None or isinstance(value, str):
            problems.append((index, f"record {index}: field {name!r} is empty"))
        else:
            problems.append(
                (
                    index,
                    f"record {index}: field {name!r} holds {_describe(value)}, not text; "
                    "it is not embedded",
                )
            )
    return texts, used


def _record_id(record: Record, id_field: str | None, problems: list[tuple[int | None, str]]) -> str:
    if id_field is None:
        return str(record.index)
    value = record.fields.get(id_field)
    if value is None or isinstance(value, (dict, list)) or value == "":
        problems.append(
            (
                record.index,
                f"record {record.index} has no usable {id_field!r} id; its index is its id",
            )
        )
        return str(record.index)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _metadata(
    record: Record, embedded: set[str], meta_names: tuple[str, ...], options: IngestOptions
) -> Metadata:
    fields = record.fields
    if options.meta_fields is None:
        names = [name for name in fields if name not in embedded]
    else:
        names = list(options.meta_fields)
    names.extend(name for name in meta_names if name not in names)
    scalars = _SCALARS
    return {
        name: value if type(value) in scalars else _scalar(value)
        for name in names
        for value in (fields.get(name),)
    }


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _scalar(value: Any) -> JsonScalar | list[JsonScalar]:
    """Metadata keeps scalars and lists of scalars; anything deeper as its JSON text."""
    if type(value) in _SCALARS or isinstance(value, (str, int, float)):
        return value  # type: ignore[no-any-return]
    if isinstance(value, list) and all(
        item is None or isinstance(item, (str, int, float, bool)) for item in value
    ):
        return list(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"
