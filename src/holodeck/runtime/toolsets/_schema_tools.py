"""Tools whose JSON Schema comes from elsewhere (an MCP server, the TypeScript compiler):
the arguments reach the tool as the model sent them, and the tool's own side checks them."""

from __future__ import annotations

from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

_ANY_ARGS = SchemaValidator(
    core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())
)


def schema_tool(
    toolset: AbstractToolset[Any], definition: ToolDefinition, ctx: RunContext[Any]
) -> ToolsetTool[Any]:
    """`definition` offered by `toolset`, its arguments any JSON object."""
    return ToolsetTool(
        toolset=toolset,
        tool_def=definition,
        max_retries=ctx.max_retries,
        args_validator=_ANY_ARGS,
    )
