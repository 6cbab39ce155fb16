"""Assemble an agent's tools from its spec: every kind, wrapped for observation."""

from __future__ import annotations

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
    for tool in spec.tools:
        if isinstance(tool, FunctionTool):
            functions.add_tool(function_tool(tool, spec.root, spec.params))
        elif isinstance(tool, PromptTool):
            functions.add_tool(prompt_tool(tool, spec.root, _prompt_runner(spec, options)))
        elif isinstance(tool, AgentTool):
            pass  # added with the image's sub-agents below: both live in spec.subagents
        elif isinstance(tool, TypeScriptTool):
            typescript.append(tool)
        elif isinstance(tool, McpTool | VectorstoreTool):
            raise ToolLoadError(
                f"tool `{tool.name}`: {tool.type} tools are not supported by this version yet",
                spec.source,
            )
    if typescript:  # one Node process serves all of them
        from holodeck.tools.typescript import typescript_toolset

        sets.append(typescript_toolset(typescript, spec.root, spec.params))
    if spec.subagents:
        from holodeck.tools.subagent import subagent_tools

        for sub in subagent_tools(spec, options):
            functions.add_tool(sub)
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
