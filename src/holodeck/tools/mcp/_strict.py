"""Pass 2 of `model_schema`: OpenAI's strict-mode form, where it keeps the meaning.

pydantic-ai's `OpenAIJsonSchemaTransformer` (run on every request) already moves a `$ref`
with siblings into `anyOf` and, for a tool whose `strict` is None, finds what strict mode
refuses among objects and arrays (open objects, optional properties, untyped `items`,
unsupported formats): it then sends the tool non-strict. It does not, with
`strict=None`, make a schema strict, so this pass does what it leaves: optional
properties become required-but-nullable (`strip_nulls` undoes it), keywords strict mode
refuses move into the description, and keywords it never checks (`not`, `if`, `allOf`,
nodes without a type) mark the tool non-strict."""

from __future__ import annotations

import json
from typing import Any

from holodeck.tools.mcp._args import ArgShape
from holodeck.tools.mcp._clean import JsonSchema, _join

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
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and any(t in pattern for t in ("(?=", "(?!", "(?<=", "(?<!")):
            self._move(schema, "pattern")
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
            # an open object: strict mode cannot say the model may add keys (pydantic-ai sees it)
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
            # unshaped (under $defs), a null could not be taken out: it stays optional
            if name not in required and shaped and not _accepts_null(child_schema):
                child_schema = _nullable(child_schema)
                drop.add(name)
            walked[name] = child_schema
        schema["properties"] = walked
        # pydantic-ai closes objects only for tools sent with strict=None; non-strict ones too
        schema["additionalProperties"] = False
        if not shaped:
            return None
        schema["required"] = list(dict.fromkeys([*properties, *required]))
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
