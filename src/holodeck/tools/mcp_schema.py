"""Names and input schemas of MCP tools, made acceptable to model providers.

    >>> exposed_name("files", "read.file", taken=set())
    'files_read_file'

MCP servers describe their tools with any JSON Schema; providers accept less. OpenAI and
Anthropic want an object at the root (no `anyOf` there, `type` present), OpenAI refuses an
array without `items`, and OpenAI's strict mode wants every object closed, every property
required and only some keywords. `model_schema` rewrites a server's schema into that form
without dropping what it says:

- `$ref`s are inlined (recursive ones kept under `$defs`), `$schema`/`$id`/`$comment` go;
- a missing `type` is inferred, `type: [a, b]` becomes `anyOf`, `nullable` becomes a null
  type, draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum` become numbers;
- `oneOf` becomes `anyOf`, `allOf` of objects is merged, a root `anyOf` of objects becomes
  one object whose description lists the accepted argument sets;
- objects that declare their properties are closed and their optional properties become
  required-but-nullable (the nulls are removed again by `strip_nulls` before the call, so
  the server sees an omitted argument and applies its default);
- keywords strict mode rejects (`default`, `minLength`, unsupported `format`s, ...) move
  into the description, where the model still reads them.

What cannot be rewritten without changing its meaning (`not`, `if`/`then`, open objects
with `additionalProperties`, ...) is kept; such a tool is then marked non-strict
(`strict=False`), which every provider accepts.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

JsonSchema = dict[str, Any]

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_NAME = 64
MAX_INLINED_NODES = 5000  # past this, refs stay refs (under $defs) instead of being copied

_DROPPED = ("$schema", "$id", "$comment", "$anchor", "$dynamicAnchor", "$vocabulary", "nullable")
_JSON_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")
_TYPE_ALIASES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "double": "number",
    "bool": "boolean",
    "dict": "object",
    "list": "array",
}
_BY_TYPE = {
    "string": (
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "contentEncoding",
        "contentMediaType",
    ),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "array": (
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedItems",
        "additionalItems",
    ),
    "object": (
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedProperties",
        "dependentRequired",
        "dependentSchemas",
    ),
}
_BY_TYPE["integer"] = _BY_TYPE["number"]
_SCHEMA_KEYS = ("additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
_SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")

# OpenAI strict mode: what a schema node may hold (anything else makes the tool non-strict)
_STRICT_KEYS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "description",
        "title",
        "$ref",
        "$defs",
        "format",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "examples",
    }
)
_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
# moved into the description: the model still reads them, strict mode no longer sees them
_NOTED = (
    "default",
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "contentEncoding",
    "contentMediaType",
    "deprecated",
    "readOnly",
    "writeOnly",
)
_TYPED = ("type", "anyOf", "$ref", "enum", "const")


@dataclass(frozen=True)
class ArgShape:
    """Where `model_schema` made optional properties nullable, so `strip_nulls` can undo it."""

    drop_null: frozenset[str] = frozenset()
    properties: Mapping[str, ArgShape] = field(default_factory=dict)
    items: ArgShape | None = None


@dataclass(frozen=True)
class ToolSchema:
    schema: JsonSchema
    shape: ArgShape | None
    strict_ok: bool  # False: send with strict=False (some keyword strict mode cannot take)


def model_schema(raw: Any) -> ToolSchema:
    """The schema to show the model for a server's `inputSchema` (which is not changed)."""
    cleaner = _Cleaner(raw if isinstance(raw, dict) else {})
    schema = _rooted(cleaner.node(copy.deepcopy(raw) if isinstance(raw, dict) else {}))
    strict = _Strict()
    schema, shape = strict.node(schema, shaped=True, root=True)
    defs = {name: strict.node(d, shaped=False)[0] for name, d in cleaner.defs.items()}
    if defs:
        schema["$defs"] = defs
    return ToolSchema(schema, shape, strict.ok)


def strip_nulls(value: Any, shape: ArgShape | None) -> Any:
    """`value` without the nulls given for properties that were optional (not nullable)."""
    if shape is None:
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if item is None and key in shape.drop_null:
                continue
            child = shape.properties.get(key)
            out[key] = strip_nulls(item, child) if child is not None else item
        return out
    if isinstance(value, list) and shape.items is not None:
        return [strip_nulls(item, shape.items) for item in value]
    return value


def exposed_name(server: str, tool: str, taken: set[str]) -> str:
    """`<server>_<tool>` as providers accept it: other characters become `_`, a name past
    64 characters or already taken is cut and ends with a hash of the original."""
    full = f"{server}_{tool}"
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", full)
    if len(name) > MAX_NAME or name in taken:
        digest = hashlib.sha1(full.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - len(digest) - 1]}_{digest}"
        bump = 0
        while name in taken:  # only if two originals hash alike after cutting
            bump += 1
            digest = hashlib.sha1(f"{full}#{bump}".encode()).hexdigest()[:8]
            name = f"{name[: MAX_NAME - len(digest) - 1]}_{digest}"
    return name


# ---------------------------------------------------------------------------------------
# Pass 1: a clean, self-contained schema in one dialect


class _Cleaner:
    def __init__(self, root: JsonSchema) -> None:
        self.root = root
        self.defs: dict[str, JsonSchema] = {}
        self._named: dict[str, str] = {}
        self._inlining: list[str] = []
        self._budget = MAX_INLINED_NODES

    def node(self, value: Any) -> Any:
        self._budget -= 1
        if value is True:
            return {}
        if value is False or not isinstance(value, dict):
            return False if value is False else {}
        schema = {k: v for k, v in value.items() if k not in (*_DROPPED, "$defs", "definitions")}
        if value.get("nullable") is True:
            _add_null(schema)
        if isinstance(schema.get("$ref"), str):
            return self._ref(schema)
        schema.pop("$ref", None)
        _draft4_bounds(schema)
        _drop_malformed(schema)
        _fix_types(schema)
        self._children(schema)
        if "oneOf" in schema and "anyOf" not in schema:
            schema["anyOf"] = schema.pop("oneOf")
        _merge_all_of(schema)
        if isinstance(schema.get("type"), list):
            return _split_types(schema)
        _infer_type(schema)
        if schema.get("type") == "array" and "items" not in schema and "prefixItems" not in schema:
            schema["items"] = {}
        return schema

    def _children(self, schema: JsonSchema) -> None:
        for key in _SCHEMA_KEYS:
            if key in schema:
                sub = schema[key]
                schema[key] = sub if isinstance(sub, bool) else self.node(sub)
        forbidden: set[str] = set()
        for key in _SCHEMA_MAPS:
            if key in schema:
                members = schema[key]
                if not isinstance(members, dict):
                    del schema[key]
                    continue
                cleaned = {name: self.node(sub) for name, sub in members.items()}
                if key == "properties":  # `false`: the property may not be given at all
                    forbidden = {n for n, s in cleaned.items() if s is False}
                    cleaned = {n: s for n, s in cleaned.items() if s is not False}
                schema[key] = cleaned
        for key in _SCHEMA_LISTS:
            if key in schema:
                members = schema[key]
                if isinstance(members, list) and members:
                    schema[key] = [self.node(sub) for sub in members]
                else:
                    del schema[key]
        items = schema.get("items")
        if isinstance(items, list):  # draft-04 tuple
            if items:
                schema["prefixItems"] = [self.node(sub) for sub in items]
            extra = schema.pop("additionalItems", None)
            schema["items"] = self.node(extra) if isinstance(extra, dict) else {}
        elif "items" in schema:
            schema["items"] = self.node(items) if items is not False else False
        required = schema.get("required")
        if isinstance(required, list):
            names = [r for r in required if isinstance(r, str) and r not in forbidden]
            schema["required"] = list(dict.fromkeys(names))
        elif "required" in schema:
            del schema["required"]
        if "enum" in schema and not (isinstance(schema["enum"], list) and schema["enum"]):
            del schema["enum"]

    def _ref(self, schema: JsonSchema) -> Any:
        ref: str = schema.pop("$ref")
        siblings = self.node(schema) if len(schema) > 0 else {}
        if not isinstance(siblings, dict):
            siblings = {}
        target = _pointer(self.root, ref)
        if target is None:
            note = f"(schema {ref} not available)"
            return {**siblings, "description": _join(siblings.get("description"), note)}
        if ref in self._inlining or self._budget <= 0:
            return {"$ref": f"#/$defs/{self._define(ref, target)}", **siblings}
        self._inlining.append(ref)
        try:
            inlined = self.node(target)
        finally:
            self._inlining.pop()
        if inlined is False:
            return False
        return {**inlined, **siblings}

    def _define(self, ref: str, target: Any) -> str:
        name = self._named.get(ref)
        if name is None:
            base = re.sub(r"[^a-zA-Z0-9_.-]", "_", ref.rsplit("/", 1)[-1]) or "def"
            name = base
            while name in self.defs:
                name += "_"
            self._named[ref] = name
            self.defs[name] = {}
            self._inlining.append(ref)
            try:
                cleaned = self.node(target)
            finally:
                self._inlining.pop()
            self.defs[name] = cleaned if isinstance(cleaned, dict) else {}
        return name


def _pointer(root: JsonSchema, ref: str) -> Any:
    """The node a local JSON pointer (`#/$defs/x`, `#/properties/a/items`) names."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for token in ref[2:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node if isinstance(node, dict | bool) else None


_NUMBER = (int, float)
_WELL_FORMED: dict[str, Any] = {
    "description": str,
    "title": str,
    "format": str,
    "pattern": str,
    "minimum": _NUMBER,
    "maximum": _NUMBER,
    "exclusiveMinimum": _NUMBER,
    "exclusiveMaximum": _NUMBER,
    "multipleOf": _NUMBER,
    "minLength": int,
    "maxLength": int,
    "minItems": int,
    "maxItems": int,
    "minProperties": int,
    "maxProperties": int,
    "uniqueItems": bool,
}


def _drop_malformed(schema: JsonSchema) -> None:
    """A keyword whose value is not what JSON Schema allows (`format: true`) says nothing
    a validator could use, and providers reject it: it goes."""
    for key, kind in _WELL_FORMED.items():
        value = schema.get(key)
        if key in schema and (
            not isinstance(value, kind) or isinstance(value, bool) is not (kind is bool)
        ):
            del schema[key]


def _add_null(schema: JsonSchema) -> None:
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "null":
        schema["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        schema["type"] = [*kind, "null"]


def _draft4_bounds(schema: JsonSchema) -> None:
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = schema.get(exclusive)
        if isinstance(flag, bool):
            del schema[exclusive]
            if flag and isinstance(schema.get(bound), int | float):
                schema[exclusive] = schema.pop(bound)


def _fix_types(schema: JsonSchema) -> None:
    if "type" not in schema:
        return
    kind = schema["type"]
    kinds = kind if isinstance(kind, list) else [kind]
    known = [_TYPE_ALIASES.get(k, k) for k in kinds if isinstance(k, str) and k not in ("any", "")]
    known = [k for k in dict.fromkeys(known) if k in _JSON_TYPES]
    if not known:
        del schema["type"]
    else:
        schema["type"] = known[0] if len(known) == 1 else known


def _split_types(schema: JsonSchema) -> JsonSchema:
    """`{type: [string, null], maxLength: 3}` -> `{anyOf: [{type: string, maxLength: 3},
    {type: null}]}`: the same set of values, in the form every provider accepts."""
    kinds: list[str] = schema.pop("type")
    specific = {k for t in kinds for k in _BY_TYPE.get(t, ())}
    enum = schema.pop("enum", None)
    branches: list[JsonSchema] = []
    for kind in kinds:
        branch: JsonSchema = {"type": kind}
        branch.update({k: schema[k] for k in _BY_TYPE.get(kind, ()) if k in schema})
        if enum is not None:
            values = [v for v in enum if _json_type(v) in _accepting(kind)]
            if not values:
                continue
            branch["enum"] = values
        branches.append(branch)
    outer = {k: v for k, v in schema.items() if k not in specific}
    if "anyOf" in outer:  # both: every value must fit one type and one alternative
        outer["allOf"] = [{"anyOf": outer.pop("anyOf")}, {"anyOf": branches}]
    else:
        outer["anyOf"] = branches
    return outer


def _accepting(kind: str) -> tuple[str, ...]:
    return ("integer", "number") if kind == "number" else (kind,)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _infer_type(schema: JsonSchema) -> None:
    if "type" in schema or any(k in schema for k in ("anyOf", "allOf", "$ref", "not")):
        return
    if any(k in schema for k in _BY_TYPE["object"]):
        schema["type"] = "object"
    elif any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
        schema["type"] = "array"
    elif "const" in schema:
        schema["type"] = _json_type(schema["const"])
    elif "enum" in schema:
        kinds = {_json_type(v) for v in schema["enum"]}
        if kinds == {"integer", "number"}:
            kinds = {"number"}
        if len(kinds) == 1:
            schema["type"] = kinds.pop()


def _merge_all_of(schema: JsonSchema) -> None:
    """`allOf` of plain objects (a TypeScript intersection) becomes one object."""
    members = schema.get("allOf")
    if not isinstance(members, list):
        return
    mergeable = {"type", "properties", "required", "description", "title", "additionalProperties"}
    if not all(
        isinstance(m, dict) and m.get("type", "object") == "object" and set(m) <= mergeable
        for m in members
    ):
        return
    if schema.get("type", "object") != "object":
        return
    properties = dict(schema.get("properties") or {})
    required = list(schema.get("required") or [])
    closed = schema.get("additionalProperties") is False
    for member in members:
        for name, sub in (member.get("properties") or {}).items():
            if name in properties and properties[name] != sub:
                return  # the same property constrained twice: keep the allOf
            properties[name] = sub
        required += [r for r in member.get("required") or [] if r not in required]
        closed = closed or member.get("additionalProperties") is False
        if member.get("description") and not schema.get("description"):
            schema["description"] = member["description"]
    del schema["allOf"]
    schema.update(type="object", properties=properties)
    if required:
        schema["required"] = required
    if closed:
        schema["additionalProperties"] = False


def _rooted(cleaned: Any) -> JsonSchema:
    """Providers take an object at the root, without `anyOf`/`oneOf`/`allOf`/`not`/`enum`
    there: alternatives of objects become one object taking the union of their properties
    (its description names each argument set); other root constraints move into the
    description (the server still checks them)."""
    if not isinstance(cleaned, dict):
        return {"type": "object", "properties": {}}
    schema: JsonSchema = cleaned
    variants = schema.get("anyOf")
    if (
        schema.get("type", "object") == "object"
        and isinstance(variants, list)
        and all(_is_variant(v) for v in variants)
    ):
        schema = _union_object(schema, variants)
    if schema.get("type") != "object":
        kept: JsonSchema = {k: schema[k] for k in ("description", "title") if k in schema}
        if not kept and "type" in schema:
            kept["description"] = f"(arguments: {json.dumps(schema, default=str)})"
        return {**kept, "type": "object", "properties": {}}
    schema.setdefault("properties", {})
    leftovers = {k: schema.pop(k) for k in _ROOT_REFUSED if k in schema}
    if leftovers:
        note = f"(also: {json.dumps(leftovers, ensure_ascii=False, default=str)})"
        schema["description"] = _join(schema.get("description"), note)
    return schema


_ROOT_REFUSED = ("anyOf", "oneOf", "allOf", "not", "enum", "const", "if", "then", "else")
_VARIANT_KEYS = {"type", "properties", "required", "description", "title", "additionalProperties"}


def _is_variant(variant: Any) -> bool:
    """An alternative that only adds properties or required names to the root object."""
    return (
        isinstance(variant, dict)
        and variant.get("type", "object") == "object"
        and set(variant) <= _VARIANT_KEYS
    )


def _union_object(schema: JsonSchema, variants: list[JsonSchema]) -> JsonSchema:
    properties: dict[str, Any] = dict(schema.get("properties") or {})
    for variant in variants:
        for name, sub in (variant.get("properties") or {}).items():
            if name not in properties:
                properties[name] = sub
            elif properties[name] != sub:
                seen = properties[name].get("anyOf") if "anyOf" in properties[name] else None
                options = list(seen) if seen is not None else [properties[name]]
                if sub not in options:
                    options.append(sub)
                properties[name] = {"anyOf": options}
    sets = [list(v.get("required") or []) for v in variants]
    common = [name for name in sets[0] if all(name in s for s in sets[1:])]
    required = list(dict.fromkeys([*(schema.get("required") or []), *common]))
    forms = "; ".join(
        "(" + (", ".join(s) if s else "no arguments") + ")" for s in dict.fromkeys(map(tuple, sets))
    )
    out = {k: v for k, v in schema.items() if k != "anyOf"}
    out["description"] = _join(
        out.get("description"), f"Give the required arguments of one of these forms: {forms}."
    )
    out.update(type="object", properties=properties, required=required)
    if all(v.get("additionalProperties") is False for v in variants):
        out["additionalProperties"] = False
    return out


# ---------------------------------------------------------------------------------------
# Pass 2: strict-mode form, where it keeps the meaning


class _Strict:
    def __init__(self) -> None:
        self.ok = True

    def node(self, schema: Any, *, shaped: bool, root: bool = False) -> tuple[Any, ArgShape | None]:
        """`shaped`: nulls put into this node's arguments can be taken out again."""
        if not isinstance(schema, dict):
            self.ok = False  # a boolean schema
            return schema, None
        schema = dict(schema)
        self._note(schema)
        unknown = set(schema) - _STRICT_KEYS
        if unknown or not any(k in schema for k in _TYPED):
            self.ok = False
        if isinstance(schema.get("format"), str) and schema["format"] not in _STRICT_FORMATS:
            self.ok = False
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and any(t in pattern for t in ("(?=", "(?!", "(?<=", "(?<!")):
            self._move(schema, "pattern")
        ref = schema.get("$ref")
        if isinstance(ref, str) and len(schema) > 1 and "anyOf" not in schema:
            schema["anyOf"] = [{"$ref": schema.pop("$ref")}]  # strict: no siblings beside $ref
        for key in ("not", "if", "then", "else", "contains", "propertyNames"):
            if isinstance(schema.get(key), dict):
                schema[key] = self.node(schema[key], shaped=False)[0]
        for key in ("allOf", "prefixItems"):
            if isinstance(schema.get(key), list):
                schema[key] = [self.node(s, shaped=False)[0] for s in schema[key]]
        shape: ArgShape | None = None
        branches = schema.get("anyOf")
        if isinstance(branches, list):
            real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
            single = shaped and len(real) == 1
            walked = [self.node(b, shaped=single and b is real[0]) for b in branches]
            schema["anyOf"] = [b for b, _ in walked]
            shape = next((s for _, s in walked if s is not None), None)
        if schema.get("type") == "array":
            items = schema.get("items")
            if not (isinstance(items, dict) and any(k in items for k in _TYPED)):
                self.ok = False
            if isinstance(items, dict):
                schema["items"], item_shape = self.node(items, shaped=shaped)
                if item_shape is not None:
                    shape = ArgShape(items=item_shape)
        if schema.get("type") == "object":
            shape = self._object(schema, shaped=shaped, root=root)
        return schema, shape

    def _object(self, schema: JsonSchema, *, shaped: bool, root: bool) -> ArgShape | None:
        for key in ("patternProperties", "dependentSchemas"):
            if isinstance(schema.get(key), dict):
                schema[key] = {n: self.node(s, shaped=False)[0] for n, s in schema[key].items()}
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            schema["additionalProperties"] = self.node(extra, shaped=False)[0]
        properties = schema.get("properties")
        if properties is None and root:
            properties = schema["properties"] = {}
        if not isinstance(properties, dict) or (extra is not None and extra is not False):
            self.ok = False  # an open object: the model may add keys, strict mode cannot say so
            if isinstance(properties, dict):
                schema["properties"] = {
                    n: self.node(s, shaped=False)[0] for n, s in properties.items()
                }
            return None
        required = list(schema.get("required") or [])
        if set(required) - set(properties):
            self.ok = False
        drop: set[str] = set()
        children: dict[str, ArgShape] = {}
        walked: dict[str, Any] = {}
        for name, sub in properties.items():
            child_schema, child = self.node(sub, shaped=shaped)
            if child is not None:
                children[name] = child
            if name not in required:
                if not shaped:
                    self.ok = False  # optional, and a null here could not be taken out
                elif not _accepts_null(child_schema):
                    child_schema = _nullable(child_schema)
                    drop.add(name)
            walked[name] = child_schema
        schema["properties"] = walked
        if shaped:
            schema["required"] = list(dict.fromkeys([*properties, *required]))
        schema["additionalProperties"] = False
        if not shaped:
            return None
        return ArgShape(frozenset(drop), children) if drop or children else None

    def _note(self, schema: JsonSchema) -> None:
        for key in _NOTED:
            if key in schema:
                self._move(schema, key)
        fmt = schema.get("format")
        if isinstance(fmt, str) and fmt not in _STRICT_FORMATS:
            self._move(schema, "format")

    @staticmethod
    def _move(schema: JsonSchema, key: str) -> None:
        value = schema.pop(key)
        text = (
            value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        )
        schema["description"] = _join(schema.get("description"), f"({key}: {text})")


def _accepts_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return schema is True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if None in (schema.get("enum") or []) or ("const" in schema and schema["const"] is None):
        return True
    return any(_accepts_null(b) for b in schema.get("anyOf") or [])


def _nullable(schema: JsonSchema) -> JsonSchema:
    """`{type: null}` first: the offline test model takes the first alternative, so it
    leaves optional arguments out."""
    outer: JsonSchema = {k: schema[k] for k in ("description", "title") if k in schema}
    inner = {k: v for k, v in schema.items() if k not in outer}
    if set(inner) == {"anyOf"}:
        return {**outer, "anyOf": [{"type": "null"}, *inner["anyOf"]]}
    return {**outer, "anyOf": [{"type": "null"}, inner]}


def _join(description: Any, note: str) -> str:
    return f"{description} {note}" if isinstance(description, str) and description else note
