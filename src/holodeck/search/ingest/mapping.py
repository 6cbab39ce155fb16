"""Check a structured source's field mapping before anything is ingested.

`holodeck validate` calls `check_mapping` to tell, without reading whole files, whether
the fields a vectorstore tool names exist: CSV header columns, fields of the JSON records
(after `record_path` and the prefixes), and `record_path` itself.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> _ = (root / "products.csv").write_text("name,description\\nKettle,Boils water\\n")
    >>> problems = check_mapping(IngestOptions(source=root / "products.csv", root=root,
    ...     vector_fields=("descripton",)))
    >>> [(problem.field, problem.message) for problem in problems]  # doctest: +NORMALIZE_WHITESPACE
    [('vector_field', "'descripton' is not a column of products.csv; its columns are:
      name, description (did you mean `description`?)")]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from holodeck.search.ingest._files import relative, resolve, walk
from holodeck.search.ingest._formats import EXTENSIONS, STRUCTURED, Format, sniff_head
from holodeck.search.ingest._json_records import normalize
from holodeck.search.ingest._options import IngestOptions
from holodeck.search.ingest._samples import csv_names, json_sample, jsonl_sample, read_head
from holodeck.search.ingest.sources import source_files
from holodeck.spec.diagnostics import did_you_mean

__all__ = ["MappingProblem", "check_mapping"]

_SAMPLE = 200  # records read to learn the fields of JSON data
_SHOWN = 20  # names listed in a message


@dataclass(frozen=True)
class MappingProblem:
    """One wrong name in the mapping: which option (`vector_fields[1]`, `record_path`,
    `meta[0]` ...) and what is wrong, naming what exists instead."""

    field: str
    message: str


def check_mapping(options: IngestOptions) -> list[MappingProblem]:
    """The problems of the structured options against the source's files (empty: fine).

    Raises `IngestError` when the source does not exist, as ingestion would."""
    source = resolve(options.source, options.root)
    if not source.exists():
        source_files(options)  # raises the error ingestion gives for a missing source
    structured: list[tuple[Path, Format]] = []
    for path in [source] if source.is_file() else walk(source):
        kind = EXTENSIONS.get(PurePosixPath(path.name).suffix.lower()) or sniff_head(
            *read_head(path)
        )
        if kind in STRUCTURED:
            structured.append((path, kind))
    if not structured:
        return _not_applicable(options, relative(source, options.root))
    problems: list[MappingProblem] = []
    for path, kind in structured:
        for problem in _check_file(path, kind, options):
            if problem not in problems:
                problems.append(problem)
    return problems


def _check_file(path: Path, kind: Format, options: IngestOptions) -> list[MappingProblem]:
    shown = relative(path, options.root)
    if kind == "csv":
        names = csv_names(path)
        problems = [
            MappingProblem(option, f"{option} applies to JSON files; {shown} is CSV")
            for option, value in (
                ("record_path", options.record_path),
                ("record_prefix", options.record_prefix),
                ("meta_prefix", options.meta_prefix),
            )
            if value is not None
        ]
        fields = _Fields(shown, "column", names, {})
        for index, name in enumerate(options.meta or ()):
            problems.extend(fields.check(f"meta[{index}]", name))
        return problems + _check_names(fields, options)
    try:
        data = json_sample(path, _SAMPLE) if kind == "json" else jsonl_sample(path, _SAMPLE)
    except (ValueError, OSError) as error:
        return [MappingProblem("source", f"{shown} cannot be read as JSON: {error}")]
    if options.record_path is not None:
        failure = _path_failure(data, options.record_path)
        if failure:
            return [MappingProblem("record_path", f"{shown}: {failure}")]
    found = normalize(
        data, options.record_path, options.meta, options.record_prefix, options.meta_prefix
    )
    values: dict[str, list[Any]] = {}
    for record in found.records[:_SAMPLE]:
        for name, value in record.fields.items():
            if name not in found.meta_names:
                values.setdefault(name, []).append(value)
    note = ""
    if options.record_path is None and isinstance(data, dict):
        lists = [str(key) for key, value in data.items() if isinstance(value, list)]
        if lists:
            choices = ", ".join(lists[:_SHOWN])
            note = f"; it holds one object: set record_path to one of its lists ({choices})"
    fields = _Fields(shown, "field", list(values), values, note)
    problems = _check_meta(data, found.problems, fields, options)
    if options.record_path is None and options.meta_prefix is not None:
        problems.append(
            MappingProblem(
                "meta_prefix",
                "meta_prefix names the `meta` fields read from outside record_path; "
                f"without record_path {shown} has none (remove it, or set record_path)",
            )
        )
    return problems + _check_names(fields, options)


@dataclass(frozen=True)
class _Fields:
    """The fields a file's records have, to check names against."""

    file: str
    noun: str  # "column" or "field"
    names: list[str]
    values: dict[str, list[Any]]  # JSON: the values seen, to tell text from numbers
    note: str = ""  # added to each message (how to reach the records)

    def check(self, option: str, name: str) -> list[MappingProblem]:
        if name in self.names:
            return []
        known = ", ".join(self.names[:_SHOWN]) + (", ..." if len(self.names) > _SHOWN else "")
        message = f"{name!r} is not a {self.noun} of {self.file}; "
        message += f"its {self.noun}s are: {known}" if known else f"it has no {self.noun}s"
        guess = did_you_mean(name, self.names)
        message += f" ({guess})" if guess else ""
        return [MappingProblem(option, message + self.note)]


def _check_names(fields: _Fields, options: IngestOptions) -> list[MappingProblem]:
    problems: list[MappingProblem] = []
    vectors = options.vector_fields or ()
    for index, name in enumerate(vectors):
        option = "vector_field" if len(vectors) == 1 else f"vector_fields[{index}]"
        problems.extend(fields.check(option, name))
        seen = [value for value in fields.values.get(name, []) if value is not None]
        if seen and not any(isinstance(value, str) for value in seen):
            problems.append(
                MappingProblem(
                    option,
                    f"{name!r} of {fields.file} holds no text in the records read "
                    f"(e.g. {seen[0]!r}): it cannot be embedded; keep it in meta_fields",
                )
            )
    for index, name in enumerate(options.meta_fields or ()):
        problems.extend(fields.check(f"meta_fields[{index}]", name))
    if options.id_field is not None:
        problems.extend(fields.check("id_field", options.id_field))
    return problems


def _check_meta(
    data: Any,
    found: list[tuple[int | None, str]],
    fields: _Fields,
    options: IngestOptions,
) -> list[MappingProblem]:
    problems: list[MappingProblem] = []
    for index, key in enumerate(options.meta or ()):
        option = f"meta[{index}]"
        if options.record_path is None:
            problems.extend(fields.check(option, key))  # without record_path: record fields
            continue
        clash = next(
            (message for _, message in found if message.startswith(f"meta field {key!r} clashes")),
            None,
        )
        if clash:
            problems.append(MappingProblem(option, f"{fields.file}: {clash}"))
            continue
        failure = _meta_failure(data, options.record_path.split("."), key.split("."))
        if failure:
            problems.append(MappingProblem(option, f"{fields.file}: {failure}"))
    return problems


def _objects(value: Any) -> list[dict[Any, Any]]:
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict)]


def _path_failure(data: Any, record_path: str) -> str | None:
    """Why `record_path` leads to no records list in `data` (None when it does)."""
    values: list[Any] = [data]
    walked: list[str] = []
    for part in record_path.split("."):
        objects = [item for value in values for item in _objects(value)]
        where = repr(".".join(walked)) if walked else "the top level"
        if not objects:
            return f"record_path {record_path!r}: {where} holds no object to find {part!r} in"
        values = [item[part] for item in objects if part in item]
        if not values:
            return (
                f"record_path {record_path!r}: no key {part!r} at {where} "
                f"(keys there: {_keys(objects)})"
            )
        walked.append(part)
    if not any(isinstance(value, list) for value in values):
        return f"record_path {record_path!r} leads to {type(values[0]).__name__}, not a list"
    return None


def _meta_failure(data: Any, record_path: list[str], meta: list[str]) -> str | None:
    """Why a `meta` path finds nothing, read as pandas does: a path of n parts is taken
    from the objects n-1 steps down `record_path` (at most the one holding the records)."""
    depth = min(len(meta) - 1, len(record_path) - 1)
    objects = _objects(data)
    for part in record_path[:depth]:
        objects = [inner for item in objects if part in item for inner in _objects(item[part])]
    walked = record_path[:depth]
    for part in meta[depth:]:
        where = repr(".".join(walked)) if walked else "the top level"
        inner = [item[part] for item in objects if part in item]
        if not inner:
            keys = _keys(objects) if objects else "none"
            return f"meta {'.'.join(meta)!r}: no key {part!r} at {where} (keys there: {keys})"
        objects = [item for value in inner for item in _objects(value)]
        walked = [*walked, part]
    return None


def _keys(objects: list[dict[Any, Any]]) -> str:
    names: list[str] = []
    for item in objects[:_SAMPLE]:
        names.extend(str(key) for key in item if str(key) not in names)
    return ", ".join(names[:_SHOWN]) + (", ..." if len(names) > _SHOWN else "") or "none"


def _not_applicable(options: IngestOptions, shown: str) -> list[MappingProblem]:
    """Structured options on a source of documents only: they would be ignored."""
    named: list[tuple[str, object]] = [
        (
            "vector_field" if len(options.vector_fields or ()) == 1 else "vector_fields[0]",
            options.vector_fields,
        ),
        ("meta_fields[0]", options.meta_fields),
        ("id_field", options.id_field),
        ("record_path", options.record_path),
        ("meta[0]", options.meta),
        ("record_prefix", options.record_prefix),
        ("meta_prefix", options.meta_prefix),
    ]
    return [
        MappingProblem(
            option,
            f"{option.split('[')[0]} applies to CSV and JSON files; "
            f"{shown} holds none (remove it, or point source at such files)",
        )
        for option, value in named
        if value
    ]
