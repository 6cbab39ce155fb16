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

What cannot be rewritten without changing its meaning is kept. Where pydantic-ai's
OpenAI transformer can tell strict mode would refuse it (open objects, optional
properties under `$defs`, arrays without an item type, `$ref` beside other keywords), the
tool goes with `strict=None` and that transformer sends it non-strict; what it never
checks (`not`, `if`/`then`, `allOf`, a node without a type) marks it `strict=False` here.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from holodeck.tools.mcp._args import ArgShape, strip_nulls
from holodeck.tools.mcp._clean import MAX_INLINED_NODES, JsonSchema, _Cleaner
from holodeck.tools.mcp._naming import MAX_NAME, TOOL_NAME, exposed_name
from holodeck.tools.mcp._root import _rooted
from holodeck.tools.mcp._strict import _Strict

__all__ = [
    "MAX_INLINED_NODES",
    "MAX_NAME",
    "TOOL_NAME",
    "ArgShape",
    "JsonSchema",
    "ToolSchema",
    "exposed_name",
    "model_schema",
    "strip_nulls",
]


@dataclass(frozen=True)
class ToolSchema:
    schema: JsonSchema
    shape: ArgShape | None
    strict_ok: bool  # False: send strict=False; True: strict=None, pydantic-ai decides


def model_schema(raw: Any) -> ToolSchema:
    """The schema to show the model for a server's `inputSchema` (which is not changed)."""
    cleaner = _Cleaner(raw if isinstance(raw, dict) else {})
    schema = _rooted(cleaner.node(copy.deepcopy(raw) if isinstance(raw, dict) else {}))
    strict = _Strict()
    schema, shape = strict.node(schema, shaped=True, root=True)
    if "$ref" in schema:
        # a root that refers back to itself (`{$ref: "#"}`) cannot be inlined, and a `$ref`
        # beside the root's own keywords reaches providers as `anyOf`: take any object
        schema = {
            "type": "object",
            "additionalProperties": True,
            "description": "Arguments as the tool describes them (its schema refers to "
            "itself and cannot be shown here).",
        }
        return ToolSchema(schema, None, False)
    defs = {name: strict.node(d, shaped=False)[0] for name, d in cleaner.defs.items()}
    if defs:
        schema["$defs"] = defs
    return ToolSchema(schema, shape, strict.ok)
