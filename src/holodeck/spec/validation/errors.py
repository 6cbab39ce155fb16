"""Turn pydantic validation errors into located diagnostics with fix hints.

A pydantic location mixes real fields with union tags (`function`, `geval`) and
union member labels (`str`, `function-after[..., BuiltinConfig]`). The location
is walked alongside the model's annotations, so only real fields end up in the
field path and the model found at the end gives the "did you mean" candidates.
"""

from __future__ import annotations

import copy
import re
import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from holodeck.spec.compat.execution import no_effect
from holodeck.spec.compat.model import refused
from holodeck.spec.diagnostics import Collector, Diagnostic, FieldPath, Severity, did_you_mean
from holodeck.spec.image.files import SKILL_NAME_PATTERN
from holodeck.spec.models.base import TOOL_NAME_PATTERN
from holodeck.spec.validation import phrases
from holodeck.spec.yaml.source import YamlDocument

_NAME_RULES = {
    TOOL_NAME_PATTERN: "use letters, digits, `_` or `-` (at most 64 characters)",
    SKILL_NAME_PATTERN: "skill names use lowercase letters, digits and `-` (at most 64)",
}
_QUOTED = re.compile(r"'([^']*)'")
# Errors saying only "this union member has the wrong type": noise when another
# member of the same union got further and reported the real problem.
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

M = typing.TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class _Located:
    error: Any
    path: FieldPath  # data path, without tags and labels
    container: Any  # annotation of the object that holds the last element
    annotation: Any = None  # annotation of the last element itself


def diagnostics_from(
    error: ValidationError, doc: YamlDocument, model: type[BaseModel], *, base: FieldPath = ()
) -> list[Diagnostic]:
    """One diagnostic per problem; alternatives of a union on one field are merged."""
    located = [_locate(model, err, base) for err in error.errors(include_url=False)]
    groups: dict[tuple[FieldPath, str], list[_Located]] = {}
    for item in located:
        if _superseded(item, located):
            continue
        kind = "extra" if item.error["type"] == "extra_forbidden" else "value"
        groups.setdefault((item.path, kind), []).append(item)
    out = []
    for (path, _kind), items in groups.items():
        message, hint = _merged(items)
        out.append(doc.diagnostic(path, message, hint=hint))
    return out


def _merged(items: list[_Located]) -> tuple[str, str | None]:
    """One sentence for the errors on one field. When each says only "wrong type" (the
    members of a union), the sentence names every accepted form: "expected `web_search`,
    `web_fetch` or a mapping" rather than one pydantic message per member."""
    wanted = [_wanted(item) for item in items]
    if any(w is None for w in wanted) or _quoted_number(items):
        messages: list[str] = []
        hint = None
        for item in items:
            message, item_hint = _describe(item)
            if message not in messages:
                messages.append(message)
            hint = hint or item_hint
        return "; ".join(messages), hint
    given = items[0].error.get("input")
    joined = phrases.join_or(list(dict.fromkeys(f for forms in wanted for f in forms or ())))
    literals = [c for item in items for c in phrases.choices(item.error)]
    if literals and isinstance(given, str | int | float) and not isinstance(given, bool):
        message = f"{phrases.shown(given)} is not allowed; expected {joined}"
    else:
        message = f"expected {joined}, not {phrases.shown(given)}"
    hint = _closest(given, literals) if isinstance(given, str) else None
    return message, hint or _form_hint(items)


def _closest(given: str, choices: list[str]) -> str | None:
    """`debug` for `DEBUG` is a near miss too, though difflib scores case apart."""
    same = [c for c in choices if c.lower() == given.lower()]
    return f"did you mean `{same[0]}`?" if same else did_you_mean(given, choices)


def _wanted(item: _Located) -> list[str] | None:
    """The forms `item` accepts; a mapping of a known model names its required keys."""
    forms = phrases.expected(item.error)
    if forms is None or not phrases.is_mapping_error(item.error) or not _is_model(item.annotation):
        return forms
    fields = {n: f for n, f in item.annotation.model_fields.items() if n != "type"}
    required = [f"`{name}`" for name, info in fields.items() if info.is_required()]
    if required:
        return [f"a mapping with {phrases.join_and(required)}"]
    if len(fields) <= 2:  # e.g. instructions: `file` or `inline`
        return [f"a mapping with {phrases.join_or([f'`{name}`' for name in fields])}"]
    return forms


def _quoted_number(items: list[_Located]) -> bool:
    """A literal number written in quotes (`"1"` for `1`): said on its own, with its fix."""
    return any(
        item.error["type"] in ("literal_error", "enum")
        and isinstance(item.error.get("input"), str)
        and item.error["input"] in str((item.error.get("ctx") or {}).get("expected", "")).split()
        for item in items
    )


def _form_hint(items: list[_Located]) -> str | None:
    """For a non-mapping where a tagged mapping belongs (a tool, a metric): its types."""
    if not any(phrases.is_mapping_error(item.error) for item in items):
        return None
    tags = _tags(items[0].annotation)
    return "write a mapping whose `type` is one of: " + ", ".join(tags) if tags else None


def _superseded(item: _Located, located: list[_Located]) -> bool:
    """A union member's "wrong type" complaint is noise when another member got past
    the type check: it reported a deeper problem, or a specific one on the same field."""
    if item.error["type"] not in _TYPE_MISMATCH:
        return False
    size = len(item.path)
    return any(
        other is not item
        and other.path[:size] == item.path
        and (len(other.path) > size or other.error["type"] not in _TYPE_MISMATCH)
        for other in located
    )


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
    the rest of the document is still checked. Keys of other tools that only tune what
    this runtime does not have (`compat.execution.no_effect`) are treated so always.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        extras = [
            _locate(model, e, ())
            for e in exc.errors(include_url=False)
            if e["type"] == "extra_forbidden"
        ]
        if not lenient:  # only keys that tune what this runtime lacks are warnings
            extras = [x for x in extras if _no_effect(x) is not None]
            if not extras:
                collector.extend(diagnostics_from(exc, doc, model, base=base))
                return None
        for extra in extras:
            key = str(extra.path[-1])
            why = _no_effect(extra)
            if why is not None:
                message, hint = why, None
            else:
                message = f"`{key}` is not part of spec_version 1"
                hint = did_you_mean(key, _fields(extra.container))
            collector.add(
                doc.diagnostic(
                    (*base, *extra.path),
                    message if strict else f"ignored: {message}",
                    severity=Severity.ERROR if strict else Severity.WARNING,
                    hint=hint,
                )
            )
        try:
            return model.model_validate(_without(data, [x.path for x in extras]))
        except ValidationError as again:
            collector.extend(diagnostics_from(again, doc, model, base=base))
            return None


def _no_effect(extra: _Located) -> str | None:
    models = {m.__name__ for m in _members(extra.container) if _is_model(m)}
    return no_effect(models, str(extra.path[-1]))


def _locate(model: type[BaseModel], err: Any, base: FieldPath) -> _Located:
    """Walk the error's location through the model, keeping only real fields."""
    path: list[str | int] = list(base)
    annotation: Any = model
    container: Any = model
    for elem in err["loc"]:
        members = [m for m in _members(annotation) if m is not type(None)]
        if len(members) > 1 and isinstance(elem, str):
            annotation = _union_member(members, elem)
            continue  # a tag or a member label, not a field
        container = annotation
        path.append(elem)
        annotation = _child(members[0] if members else None, elem)
    return _Located(err, tuple(path), container, annotation)


def _union_member(members: list[Any], label: str) -> Any:
    for member in members:
        if _is_model(member):
            tag = member.model_fields.get("type")
            if (tag is not None and tag.default == label) or member.__name__ in label:
                return member
    return None  # a scalar member: nothing to walk into


def _child(annotation: Any, elem: Any) -> Any:
    if _is_model(annotation):
        field = annotation.model_fields.get(elem) if isinstance(elem, str) else None
        return field.annotation if field is not None else None
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, tuple) and args:
        return args[0]
    if origin is dict and len(args) == 2:
        return args[1]
    return None


def _members(annotation: Any) -> list[Any]:
    if annotation is None:
        return []
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            out.extend(_members(arg))
        return out
    return [annotation]


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _fields(annotation: Any) -> set[str]:
    names: set[str] = set()
    for member in _members(annotation):
        if _is_model(member):
            names.update(member.model_fields)
    return names


def _tags(annotation: Any) -> list[str]:
    return [
        str(m.model_fields["type"].default)
        for m in _members(annotation)
        if _is_model(m) and "type" in m.model_fields
    ]


def _describe(item: _Located) -> tuple[str, str | None]:
    err, path = item.error, item.path
    kind = err["type"]
    ctx = err.get("ctx") or {}
    msg = str(err["msg"])
    given = err.get("input")
    if kind == "extra_forbidden":
        key = str(path[-1]) if path else "?"
        models = {m.__name__ for m in _members(item.container) if _is_model(m)}
        known_elsewhere = refused(models, key, given, path)
        if known_elsewhere is not None:
            return known_elsewhere
        fields = _fields(item.container)
        hint = did_you_mean(key, fields) or (
            "allowed here: " + ", ".join(sorted(fields)) if fields else None
        )
        return f"unknown field `{key}`", hint
    if kind == "missing":
        return "required field is missing", None
    if kind == "union_tag_not_found":
        tags = _tags(_child(item.container, path[-1]) if path else None)
        return "required field `type` is missing", ("one of: " + ", ".join(tags) if tags else None)
    if kind == "union_tag_invalid":
        tag = str(ctx.get("tag", ""))
        expected = _QUOTED.findall(str(ctx.get("expected_tags", "")))
        hint = did_you_mean(tag, expected) or "expected one of: " + ", ".join(expected)
        return f"unknown type `{tag}`", hint
    if kind in ("literal_error", "enum") and _quoted_number([item]):
        return f"`{given}` must be a number", "write it without quotes"
    if kind == "string_pattern_mismatch" and path and path[-1] == "name":
        rule = _NAME_RULES.get(str(ctx.get("pattern")))
        if rule is not None:
            return f"`{given}` is not a valid name", rule
    wanted = _wanted(item)
    if wanted is not None:
        return f"expected {phrases.join_or(wanted)}, not {phrases.shown(given)}", None
    sentence = phrases.constraint(err)
    if sentence is not None:
        return sentence, None
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    return msg, None


def salvaged(model: type[M], data: Any, error: ValidationError, *, rounds: int = 4) -> M | None:
    """`data` validated with the parts that failed left out, or None.

    Each round drops the value at every error's path (or, for a missing field, the
    mapping that lacks it), so the rest of a broken file still takes effect and
    errors elsewhere are not hidden behind it. Problems are reported by the caller.
    """
    for _ in range(rounds):
        paths = []
        for err in error.errors(include_url=False):
            path = _locate(model, err, ()).path
            if err["type"] == "missing":
                path = path[:-1]
            while path and isinstance(path[-1], int):
                path = path[:-1]  # a bad list entry: the list goes (indexes would shift)
            if not path:
                return None  # the document itself is wrong: nothing to keep
            paths.append(path)
        data = _without(data, paths)
        try:
            return model.model_validate(data)
        except ValidationError as again:
            error = again
    return None


def _without(data: Any, paths: list[FieldPath]) -> Any:
    """A copy of `data` with the keys at `paths` removed."""
    pruned = copy.deepcopy(data)
    for path in paths:
        node = pruned
        for part in path[:-1]:
            node = _entry(node, part)
        if isinstance(node, dict):  # else an enclosing value was removed already
            node.pop(path[-1], None)
    return pruned


def _entry(node: Any, part: str | int) -> Any:
    if isinstance(node, dict):
        return node.get(part)
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return None
