"""JSON documents to flat records, with the semantics of `pandas.json_normalize`.

`record_path` (dotted here: "data.records" is pandas' ["data", "records"]) leads to the
records lists, walking through every object of a list met on the way; `meta` paths are
read from the objects along that walk (a path of n parts from the object at depth n-1)
and copied onto each record as "a.b"; nested objects are flattened with "." and
`record_prefix` / `meta_prefix` prefix the two kinds of names. Where pandas raises
(a missing key, a name clash) a problem is recorded instead and the rest is read.

    >>> data = {"source": "kb", "items": [{"id": 1, "info": {"title": "T"}}]}
    >>> normalize(data, "items", ("source",), None, "meta_").records[0].fields
    {'id': 1, 'info.title': 'T', 'meta_source': 'kb'}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from holodeck.search.ingest._records import Record, RecordSet

_MISSING = object()
BAD_LINE = object()  # a JSON line that did not parse: it keeps its index, yields no record


def flatten(record: dict[Any, Any]) -> dict[str, Any]:
    """Nested objects become "a.b" names; scalar fields keep their place, nested ones
    follow them (the column order pandas gives). An empty object leaves no field."""
    flat: dict[str, Any] = {}
    nested: list[tuple[str, dict[Any, Any]]] = []
    for key, value in record.items():
        if isinstance(value, dict):
            nested.append((str(key), value))
        else:
            flat[str(key)] = value
    for prefix, value in nested:
        _flatten_into(flat, prefix, value)
    return flat


def _flatten_into(flat: dict[str, Any], prefix: str, value: dict[Any, Any]) -> None:
    for key, inner in value.items():
        name = f"{prefix}.{key}"
        if isinstance(inner, dict):
            _flatten_into(flat, name, inner)
        else:
            flat[name] = inner


def normalize(
    data: Any,
    record_path: str | None,
    meta: Sequence[str] | None,
    record_prefix: str | None,
    meta_prefix: str | None,
    first: int = 0,
) -> RecordSet:
    """The records of a parsed JSON document (or of a JSON lines file's list of lines);
    they are numbered from `first` (a JSON lines file is read a batch of lines at a time)."""
    found = RecordSet()
    if record_path is None:
        items = data if isinstance(data, list) else [data]
        _add_records(found, [(item, {}) for item in items], record_prefix, first)
        found.meta_names = tuple(meta or ())  # without record_path, `meta` names record fields
        return found
    paths = [tuple(path.split(".")) for path in meta or ()]
    pairs: list[tuple[Any, dict[str, Any]]] = []
    _walk(data, tuple(record_path.split(".")), paths, {}, 0, pairs, found, record_path)
    _add_records(found, pairs, record_prefix, first)
    names = {name for record in found.records for name in record.fields}
    kept: list[str] = []
    for path in paths:
        key = ".".join(path)
        name = f"{meta_prefix or ''}{key}"
        if name in names:
            found.problems.append(
                (
                    None,
                    f"meta field {key!r} clashes with a record field named {name!r}: "
                    "set meta_prefix (or record_prefix) to tell them apart; it is left out",
                )
            )
            continue
        kept.append(name)
        for record in found.records:
            record.fields[name] = pairs[record.index - first][1].get(key)
    found.meta_names = tuple(kept)
    return found


def _walk(
    data: Any,
    path: tuple[str, ...],
    metas: list[tuple[str, ...]],
    seen: dict[str, Any],
    level: int,
    pairs: list[tuple[Any, dict[str, Any]]],
    found: RecordSet,
    record_path: str,
) -> None:
    """Follow `path` from `data` (an object or a list of objects) down to records lists."""
    objects = [data] if isinstance(data, dict) else data
    if not isinstance(objects, list):
        found.problems.append((None, f"record_path {record_path!r}: {_kind(data)} is no object"))
        return
    for item in objects:
        if item is BAD_LINE:
            continue
        if not isinstance(item, dict):
            found.problems.append(
                (
                    None,
                    f"record_path {record_path!r}: found {_kind(item)} where an object "
                    f"with {path[0]!r} should be",
                )
            )
            continue
        values = dict(seen)
        for meta in metas:
            if level + 1 == len(meta) and len(path) > 1:
                values[".".join(meta)] = _pull(item, meta, len(meta) - 1, found)
        step = item.get(path[0], _MISSING)
        if step is _MISSING:
            found.problems.append(
                (
                    None,
                    f"record_path {record_path!r}: no key {path[0]!r} here "
                    f"(keys: {', '.join(map(str, item)) or 'none'})",
                )
            )
            continue
        if len(path) > 1:
            _walk(step, path[1:], metas, values, level + 1, pairs, found, record_path)
            continue
        for meta in metas:
            if level + 1 <= len(meta):
                values[".".join(meta)] = _pull(item, meta, level, found)
        if step is None:
            continue  # pandas reads a null records list as an empty one
        if not isinstance(step, list):
            found.problems.append(
                (None, f"record_path {record_path!r} leads to {_kind(step)}, not a list")
            )
            continue
        pairs.extend((record, values) for record in step)


def _pull(item: dict[str, Any], meta: tuple[str, ...], start: int, found: RecordSet) -> Any:
    """The value at `meta[start:]` in `item`; None (and a problem) when it is missing."""
    value: Any = item
    for key in meta[start:]:
        if not isinstance(value, dict) or key not in value:
            found.problems.append(
                (
                    None,
                    f"meta field {'.'.join(meta)!r} is missing: no key {key!r} where "
                    "pandas reads it (one step down record_path per part before the last)",
                )
            )
            return None
        value = value[key]
    return value


def _add_records(
    found: RecordSet, pairs: list[tuple[Any, dict[str, Any]]], record_prefix: str | None, first: int
) -> None:
    prefix = record_prefix or ""
    for index, (item, _) in enumerate(pairs, start=first):
        if item is BAD_LINE:
            found.records.append(Record(index, {}, None))
            continue
        if not isinstance(item, dict):
            found.problems.append((index, f"record {index} is {_kind(item)}, not an object"))
            found.records.append(Record(index, {}, None))
            continue
        fields = {f"{prefix}{name}": value for name, value in flatten(item).items()}
        found.records.append(Record(index, fields, item))


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"
