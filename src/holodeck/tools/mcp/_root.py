"""What providers take at the root of a tool's schema: an object, without alternatives."""

from __future__ import annotations

import json
from typing import Any

from holodeck.tools.mcp._clean import JsonSchema, _join


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
