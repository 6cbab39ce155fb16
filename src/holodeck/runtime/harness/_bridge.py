"""HoloDeck's tools offered to the Claude Code CLI as an in-process MCP server (the
SDK's `create_sdk_mcp_server`): each call runs here, through the agent's observed
toolset, so it is reported, timed, traced and passed through middleware like any call."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.toolsets import AbstractToolset

from holodeck.runtime.harness._sdk_options import SERVER_NAME


async def tools_server(toolsets: list[AbstractToolset[Any]], ctx: RunContext[Any]) -> Any:
    """The MCP server config offering every tool of `toolsets`, and the tools' names."""
    from claude_agent_sdk import SdkMcpTool, create_sdk_mcp_server

    offered: list[SdkMcpTool[Any]] = []
    for toolset in toolsets:
        for name, tool in (await toolset.get_tools(ctx)).items():
            definition = tool.tool_def
            schema = dict(definition.parameters_json_schema)
            if "properties" not in schema:  # the SDK passes on only full object schemas
                schema = {"type": "object", "properties": {}, **schema}
            offered.append(
                SdkMcpTool(name, definition.description or "", schema, _handler(toolset, tool, ctx))
            )
    return create_sdk_mcp_server(SERVER_NAME, tools=offered), [t.name for t in offered]


def _handler(toolset: AbstractToolset[Any], tool: Any, ctx: RunContext[Any]) -> Any:
    name = tool.tool_def.name

    async def call(args: dict[str, Any]) -> dict[str, Any]:
        try:
            validated = tool.args_validator.validate_python(args)
        except ValueError as exc:  # the model sees why, as with any provider
            return {
                "content": [{"type": "text", "text": f"invalid arguments: {exc}"}],
                "is_error": True,
            }
        result = await toolset.call_tool(name, validated, replace(ctx, tool_name=name), tool)
        text = result if isinstance(result, str) else json.dumps(result, default=str)
        return {"content": [{"type": "text", "text": text}]}

    return call
