"""Turn pydantic validation errors into located diagnostics with fix hints."""

from __future__ import annotations

import re
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from holodeck.spec._base import TOOL_NAME_PATTERN
from holodeck.spec.diagnostics import Collector, Diagnostic, FieldPath, Severity, did_you_mean
from holodeck.spec.evaluations import METRIC_TYPES
from holodeck.spec.image_files import SKILL_NAME_PATTERN
from holodeck.spec.tools import TOOL_TYPES
from holodeck.spec.yaml_source import YamlDocument

_NAME_RULES = {
    TOOL_NAME_PATTERN: "use letters, digits, `_` or `-` (at most 64 characters)",
    SKILL_NAME_PATTERN: "skill names use lowercase letters, digits and `-` (at most 64)",
}
_TAGS = frozenset(TOOL_TYPES) | frozenset(METRIC_TYPES) | {"typescript"}
_QUOTED = re.compile(r"'([^']*)'")
_SHOULD_BE = "Input should be "
_TYPE_MISMATCH = frozenset(
    {
        "string_type",
        "literal_error",
        "enum",
        "int_type",
        "int_parsing",
        "float_type",
        "float_parsing",
        "bool_type",
        "bool_parsing",
        "list_type",
        "dict_type",
        "model_type",
        "model_attributes_type",
    }
)
_EXPECTED_MAPPING = re.compile(r"a valid dictionary( or instance of \w+)?")


def diagnostics_from(
    error: ValidationError,
    doc: YamlDocument,
    model: type[BaseModel],
    *,
    base: FieldPath = (),
    extra_severity: Severity = Severity.ERROR,
) -> list[Diagnostic]:
    """One diagnostic per problem; alternatives of a union on one field are merged."""
    merged: dict[tuple[FieldPath, str], list[str]] = {}
    hints: dict[tuple[FieldPath, str], str | None] = {}
    located = [
        (err, _data_path(doc.data, base, tuple(err["loc"]), err["type"]))
        for err in error.errors(include_url=False)
    ]
    # Where a union member got past the type check, the other members' "wrong type"
    # complaints only add noise: keep the real problem.
    specific = {path for err, path in located if err["type"] not in _TYPE_MISMATCH}
    for err, path in located:
        if err["type"] in _TYPE_MISMATCH and path in specific:
            continue
        loc = tuple(err["loc"])
        kind = err["type"]
        message, hint = _describe(err, path, loc, model)
        key = (path, "extra" if kind == "extra_forbidden" else "value")
        message = _EXPECTED_MAPPING.sub("a mapping", message)
        if message not in merged.setdefault(key, []):
            merged[key].append(message)
        hints.setdefault(key, hint)
    out = []
    for (path, kind), messages in merged.items():
        severity = extra_severity if kind == "extra" else Severity.ERROR
        if all(m.startswith(_SHOULD_BE) for m in messages):
            text = "expected " + " or ".join(m[len(_SHOULD_BE) :] for m in messages)
        else:
            text = "; ".join(messages)
        out.append(doc.diagnostic(path, text, hint=hints[(path, kind)], severity=severity))
    return out


def _describe(
    err: Any, path: FieldPath, loc: FieldPath, model: type[BaseModel]
) -> tuple[str, str | None]:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    msg = str(err["msg"])
    if kind == "extra_forbidden":
        key = str(path[-1]) if path else "?"
        fields = _fields_at(model, loc[:-1])
        hint = did_you_mean(key, fields) if fields else None
        if hint is None and fields:
            hint = "allowed here: " + ", ".join(sorted(fields))
        return f"unknown field `{key}`", hint
    if kind == "missing":
        return "required field is missing", None
    if kind == "union_tag_invalid":
        tag = ctx.get("tag", "")
        expected = _QUOTED.findall(str(ctx.get("expected_tags", "")))
        hint = did_you_mean(str(tag), expected) or "expected one of: " + ", ".join(expected)
        return f"unknown type `{tag}`", hint
    if kind in ("literal_error", "enum"):
        expected = _QUOTED.findall(str(ctx.get("expected", "")))
        given = str(err.get("input"))
        return f"`{given}` is not allowed; expected {ctx.get('expected')}", did_you_mean(
            given, expected
        )
    if kind == "string_pattern_mismatch" and path and path[-1] == "name":
        rule = _NAME_RULES.get(str(ctx.get("pattern")))
        if rule is not None:
            return f"`{err.get('input')}` is not a valid name", rule
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if msg.startswith("Assertion failed, "):
        msg = msg[len("Assertion failed, ") :]
    return msg, None


def _data_path(data: Any, base: FieldPath, loc: tuple[Any, ...], kind: str = "") -> FieldPath:
    """Drop union tags and type names from a pydantic location, keeping real fields."""
    path: list[str | int] = list(base)
    current = data
    tagged: object = None  # the mapping whose union tag was already skipped
    for position, elem in enumerate(loc):
        if isinstance(current, dict):
            if (
                tagged is not current
                and elem in _TAGS
                and (current.get("type") == elem or ("type" not in current and elem == "standard"))
            ):
                tagged = current  # the next element is a field, even one named like the tag
                continue
            if isinstance(elem, str):
                is_field = elem in current or (
                    position == len(loc) - 1 and kind in ("missing", "extra_forbidden")
                )
                if not is_field:
                    continue  # a union member's label, e.g. `function-after[...]`
                path.append(elem)
                current = current.get(elem)
                continue
            break
        if isinstance(current, list) and isinstance(elem, int):
            path.append(elem)
            current = current[elem] if 0 <= elem < len(current) else None
            continue
        break  # a union member's type name, or past the data
    return tuple(path)


def _fields_at(model: type[BaseModel], loc: FieldPath) -> set[str]:
    """Field names of the model found at `loc` (for "did you mean")."""
    current: Any = model
    for elem in loc:
        current = _step(current, elem)
        if current is None:
            return set()
    candidates = _models_in(current)
    return set().union(*(set(c.model_fields) for c in candidates)) if candidates else set()


def _step(annotation: Any, elem: Any) -> Any:
    members = _members(annotation)
    models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
    if len(models) > 1:  # a union's tag comes before the member's fields
        for member in models:
            type_field = member.model_fields.get("type")
            if type_field is not None and type_field.default == elem:
                return member
    for member in members:
        if isinstance(member, type) and issubclass(member, BaseModel):
            if isinstance(elem, str) and elem in member.model_fields:
                return member.model_fields[elem].annotation
            continue
        origin = typing.get_origin(member)
        args = typing.get_args(member)
        if origin in (list, tuple) and isinstance(elem, int) and args:
            return args[0]
        if origin is dict and isinstance(elem, str) and len(args) == 2:
            return args[1]
    return None


def _members(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            out.extend(_members(arg))
        return out
    return [annotation]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    return [m for m in _members(annotation) if isinstance(m, type) and issubclass(m, BaseModel)]


M = typing.TypeVar("M", bound=BaseModel)


def validate(
    model: type[M],
    data: Any,
    doc: YamlDocument,
    collector: Collector,
    *,
    base: FieldPath = (),
    lenient: bool = False,
    strict: bool = False,
) -> M | None:
    """Validate `data` against `model`, reporting problems to `collector`.

    With `lenient`, unknown keys (keys beyond spec_version 1 of an agent image) are
    warnings — errors under `strict` — and are dropped before validating again, so
    the rest of the document is still checked.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        if not lenient:
            collector.extend(diagnostics_from(exc, doc, model, base=base))
            return None
        extras = [
            tuple(e["loc"]) for e in exc.errors(include_url=False) if e["type"] == "extra_forbidden"
        ]
        severity = Severity.ERROR if strict else Severity.WARNING
        for loc in extras:
            path = _data_path(data, base, loc, "extra_forbidden")
            collector.add(
                doc.diagnostic(
                    path,
                    f"ignored: `{path[-1]}` is not part of spec_version 1",
                    severity=severity,
                    hint=did_you_mean(str(path[-1]), _fields_at(model, loc[:-1])),
                )
            )
        pruned = _without(data, [_data_path(data, (), loc, "extra_forbidden") for loc in extras])
        try:
            return model.model_validate(pruned)
        except ValidationError as again:
            collector.extend(diagnostics_from(again, doc, model, base=base))
            return None


def _without(data: Any, paths: list[FieldPath]) -> Any:
    """A copy of `data` with the keys at `paths` removed."""
    import copy

    pruned = copy.deepcopy(data)
    for path in paths:
        node = pruned
        for part in path[:-1]:
            node = node[part]
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return pruned
