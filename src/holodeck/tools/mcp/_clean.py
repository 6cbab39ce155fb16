"""Pass 1 of `model_schema`: a clean, self-contained schema in one dialect (`$ref`s
inlined, types made explicit, `oneOf` as `anyOf`, `allOf` of objects merged)."""

from __future__ import annotations

import re
from typing import Any

JsonSchema = dict[str, Any]

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


def _join(description: Any, note: str) -> str:
    return f"{description} {note}" if isinstance(description, str) and description else note
