"""The round-trip YAML parser (ruamel.yaml): slow, but its syntax errors are the reference.

`parse_roundtrip` builds ruamel's commented containers and converts them to plain
values, recording the position of every key and item. The fast path in `_yaml_fast`
must give exactly the same data and positions; it defers to this module whenever it
meets something it does not handle itself, and for every document that fails to parse.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from holodeck.spec.diagnostics import Diagnostic, FieldPath, SpecError
from holodeck.spec.yaml.document import Position, YamlDocument
from holodeck.spec.yaml.limits import DEFINITION, YamlLimits


def parse_roundtrip(
    text: str, file: Path | None = None, limits: YamlLimits = DEFINITION
) -> YamlDocument:
    """Parse `text` with ruamel.yaml; raise `SpecError` with line and column on invalid syntax."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt", pure=True)
    try:
        raw = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        context = exc.context_mark
        if exc.context and context is not None and mark is not None and context.line != mark.line:
            # e.g. an unclosed `[`: say where it opened, not only where the file ended
            problem += f" ({exc.context} started at line {context.line + 1})"
        raise SpecError(
            [
                Diagnostic(
                    f"invalid YAML: {problem}",
                    file=file,
                    line=mark.line + 1 if mark else None,
                    column=mark.column + 1 if mark else None,
                    hint=_syntax_hint(str(problem)),
                )
            ]
        ) from None
    except (YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise SpecError([Diagnostic(f"invalid YAML: {exc}", file=file)]) from None
    # the document itself sits at line 1: missing top-level fields are reported there
    doc = YamlDocument(data=None, file=file, positions={(): Position(1, 1)})
    # ruamel keeps an alias as a shared object: counting while converting stops a bomb
    counter = [0, limits.max_values]
    try:
        doc.data = _plain(raw, (), doc.positions, counter, file, limits)
    except RecursionError:
        raise SpecError(
            [Diagnostic("YAML nests too deeply (or an alias refers to itself)", file=file)]
        ) from None
    return doc


def _syntax_hint(problem: str) -> str | None:
    if "'\\t'" in problem or "tab" in problem:
        return "indent with spaces, not tabs"
    if "found duplicate key" in problem:
        return "each key may appear once per mapping"
    if "mapping values are not allowed" in problem:
        return "quote values that contain ': ' or check the indentation"
    return None


def _plain(
    value: Any,
    path: FieldPath,
    positions: dict[FieldPath, Position],
    counter: list[int],
    file: Path | None,
    limits: YamlLimits,
) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    counter[0] += 1
    if counter[0] > counter[1]:
        raise limits.too_many_values(file)
    if isinstance(value, CommentedMap):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = key if isinstance(key, str) else _scalar_text(key)
            child = (*path, name)
            try:
                line, col = value.lc.key(key)
                positions.setdefault(child, Position(line + 1, col + 1))
            except (KeyError, TypeError):
                pass
            out[name] = _plain(item, child, positions, counter, file, limits)
        return out
    if isinstance(value, CommentedSeq):
        items: list[Any] = []
        for index, item in enumerate(value):
            child = (*path, index)
            try:
                line, col = value.lc.item(index)
                positions.setdefault(child, Position(line + 1, col + 1))
            except (KeyError, TypeError, IndexError):
                pass
            items.append(_plain(item, child, positions, counter, file, limits))
        return items
    return _scalar(value)


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    inner = getattr(value, "value", None)  # tagged scalars (`!tag text`)
    if isinstance(inner, str):
        return inner
    return str(value)


def _scalar_text(key: Any) -> str:
    plain = _scalar(key)
    if isinstance(plain, bool):
        return "true" if plain else "false"
    return "null" if plain is None else str(plain)
