"""Assemble an agent's tools from its spec: every kind, wrapped for observation."""

from __future__ import annotations

import os
from typing import Any

from pydantic_ai import FunctionToolset, RunContext
from pydantic_ai.toolsets import AbstractToolset

from holodeck.runtime.options import RunOptions
from holodeck.spec.agent_spec import AgentSpec
from holodeck.spec.tools import (
    AgentTool,
    FunctionTool,
    McpTool,
    PromptTool,
    TypeScriptTool,
    VectorstoreTool,
)
from holodeck.tools.errors import ToolLoadError
from holodeck.tools.function import function_tool
from holodeck.tools.middleware import Middleware
from holodeck.tools.observed import ObservedToolset
from holodeck.tools.prompt import prompt_tool
from holodeck.tools.skills import skills_prompt, skills_toolset


def agent_toolsets(
    spec: AgentSpec, options: RunOptions
) -> tuple[list[AbstractToolset[Any]], str | None]:
    """The agent's toolsets and the instructions they add (the list of skills)."""
    functions: FunctionToolset[Any] = FunctionToolset()
    sets: list[AbstractToolset[Any]] = [functions]
    typescript: list[TypeScriptTool] = []
    mcp: list[McpTool] = []
    for tool in spec.tools:
        if isinstance(tool, FunctionTool):
            functions.add_tool(function_tool(tool, spec.root, spec.params))
        elif isinstance(tool, PromptTool):
            functions.add_tool(prompt_tool(tool, spec.root, _prompt_runner(spec, options)))
        elif isinstance(tool, AgentTool):
            pass  # added with the image's sub-agents below: both live in spec.subagents
        elif isinstance(tool, TypeScriptTool):
            typescript.append(tool)
        elif isinstance(tool, McpTool):
            mcp.append(tool)
        elif isinstance(tool, VectorstoreTool):
            raise ToolLoadError(
                f"tool `{tool.name}`: {tool.type} tools are not supported by this version yet",
                spec.source,
            )
    if typescript:  # one Node process serves all of them
        from holodeck.tools.typescript import typescript_toolset

        sets.append(typescript_toolset(typescript, spec.root, spec.params))
    if mcp:  # servers start on first use and stay up until Agent.aclose()
        from holodeck.tools.mcp import mcp_toolset

        others = len(mcp) < len(spec.tools) or bool(spec.subagents or spec.builtins or spec.skills)
        reserved = [t.name for t in spec.tools if not isinstance(t, McpTool)] + list(spec.subagents)
        env = options.env if options.env is not None else os.environ
        sets.append(
            mcp_toolset(mcp, spec.root, env, spec.source, reserved=reserved, alone=not others)
        )
    if spec.subagents:
        from holodeck.tools.subagent import subagent_toolset

        sets.append(subagent_toolset(spec, options))
    if spec.builtins:
        from holodeck.tools.builtins import builtin_toolset

        sets.append(builtin_toolset(spec, options))
    instructions = None
    if spec.skills:
        sets.append(skills_toolset(spec.skills))
        instructions = skills_prompt(spec.skills)
    middleware = Middleware.load(list(spec.middleware))
    from pydantic_ai.toolsets import CombinedToolset

    timeouts = {
        t.name: t.timeout
        for t in spec.tools
        if isinstance(t, FunctionTool | TypeScriptTool) and t.timeout is not None
    }
    observed = ObservedToolset(CombinedToolset(sets), middleware=middleware, timeouts=timeouts)
    return [observed], instructions


def _prompt_runner(spec: AgentSpec, options: RunOptions) -> Any:
    """Runs a prompt tool's request with its own model, or the agent's."""
    cache: dict[int, Any] = {}

    async def ask(prompt: str, own: Any, ctx: RunContext[Any]) -> str:
        from pydantic_ai import Agent as PydanticAgent

        from holodeck.runtime.models import choose_model

        key = id(own)
        if key not in cache:
            built = choose_model(own or spec.model, options, spec.execution)
            cache[key] = PydanticAgent(built.model, model_settings=built.settings or None)  # type: ignore[arg-type]
        result = await cache[key].run(prompt, usage=ctx.usage)
        return str(result.output)

    return ask
