"""What `holodeck validate` says about search tools: their data against the field
mapping, and which embedding model each will use."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holodeck.errors import HoloDeckError
from holodeck.search.embeddings import describe_default
from holodeck.search.ingest import IngestError, check_mapping
from holodeck.search.tool_index import choose_tool_embedder, ingest_options
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.tools import HierarchicalDocumentTool, VectorstoreTool

if TYPE_CHECKING:
    from holodeck.llm.tool_context import ToolContext

_INDEXED = re.compile(r"^(\w+)\[(\d+)\]$")


def check_search_sources(tool: Any, root: Path) -> list[tuple[tuple[str | int, ...], str]]:
    """Problems between a `vectorstore` tool's structured data and its field mapping,
    each at the field of the tool that names what is wrong."""
    if not isinstance(tool, VectorstoreTool):
        return []
    try:
        problems = check_mapping(ingest_options(tool, root))
    except IngestError as exc:  # a source with no file to read: said at `source:`
        return [(("source",), str(exc))]
    return [(_field_path(tool, p.field), p.message) for p in problems]


def _field_path(tool: VectorstoreTool, field: str) -> tuple[str | int, ...]:
    """The mapping's field names follow IngestOptions (`vector_fields[1]`); point at what
    the user wrote (`vector_field: x`, `vector_field: [..]` or `vector_fields: [..]`)."""
    match = _INDEXED.match(field)
    name, index = (match.group(1), int(match.group(2))) if match else (field, None)
    if name in ("vector_field", "vector_fields"):
        if tool.vector_fields is not None:
            name = "vector_fields"
        else:
            name = "vector_field"
            if isinstance(tool.vector_field, str):
                index = None
    return (name,) if index is None else (name, index)


def embedders_of(
    spec: AgentSpec, context: Callable[[], ToolContext]
) -> tuple[dict[str, str], list[str]]:
    """Each search tool's embedding model, or why it will search by keywords; and the
    problems of tools whose embedding settings cannot work. `context` gives what the run
    would give the tools (called only when there are search tools)."""
    tools = [t for t in spec.tools if isinstance(t, VectorstoreTool | HierarchicalDocumentTool)]
    if not tools:
        return {}, []

    options = context()
    said: dict[str, str] = {}
    errors: list[str] = []
    for tool in tools:
        try:
            embedder, missing = choose_tool_embedder(tool, spec, options)
        except HoloDeckError as exc:  # e.g. dimensions the model cannot give
            errors.append(f"search tool `{tool.name}`: {exc}")
            continue
        if embedder is None:
            said[tool.name] = f"no embedding model ({missing}): searches by keywords"
        elif tool.embedding_model is None and spec.embedding_provider is None and spec.model:
            # the default: say which model and why (the provider's, or the local fallback)
            why = describe_default(spec.model, options.settings, options.env)
            said[tool.name] = why.replace("embeddings:", "embeds with", 1)
        else:
            said[tool.name] = f"embeds with {embedder.name}"
    return said, errors
