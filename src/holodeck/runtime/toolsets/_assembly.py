"""Assemble an agent's tools from its spec: every kind, wrapped for observation.

Tools shared by every conversation of the agent are built here once; MCP servers with
`scope: session` are built again for each conversation by the factory returned beside."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import FunctionToolset, RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset

from holodeck.runtime._call_guards import CallGuards
from holodeck.runtime._hosting import Hosting, tool_context
from holodeck.runtime._instrumented import instrumentation
from holodeck.runtime._models import choose_model
from holodeck.runtime._options import RunOptions
from holodeck.runtime._subagents import AgentFactory, subagent_toolset
from holodeck.runtime._turn import CURRENT_TURN, TURN_OBSERVER
from holodeck.runtime.toolsets._a2a import a2a_tool
from holodeck.runtime.toolsets._builtins import builtin_toolset
from holodeck.runtime.toolsets._function import function_tool
from holodeck.runtime.toolsets._mcp import mcp_toolset
from holodeck.runtime.toolsets._memory import MemoryToolset
from holodeck.runtime.toolsets._observed import ObservedToolset
from holodeck.runtime.toolsets._prompt import prompt_tool
from holodeck.runtime.toolsets._retrieval import SearchToolset
from holodeck.runtime.toolsets._skills import skills_prompt, skills_toolset
from holodeck.runtime.toolsets._typescript import typescript_toolset
from holodeck.runtime.toolsets._workspace import workspace_toolset
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.controls import ToolsPolicy
from holodeck.spec.models.tools import (
    A2ATool,
    AgentTool,
    FunctionTool,
    HierarchicalDocumentTool,
    McpTool,
    PromptTool,
    SearchTool,
    TypeScriptTool,
    VectorstoreTool,
)
from holodeck.tools.middleware import Middleware


@dataclass(frozen=True)
class AgentTools:
    toolsets: list[AbstractToolset[Any]]  # shared by every conversation
    instructions: str | None  # what they add to the prompt (the list of skills)
    # a conversation's own, given its session id and the workspace it was given
    per_session: Callable[[str | None, Path | None], list[AbstractToolset[Any]]] | None
    memory: MemoryToolset | None = None  # `memory.long_term`: its tools, recall, extraction


def agent_toolsets(
    spec: AgentSpec, options: RunOptions, hosting: Hosting, make_agent: AgentFactory
) -> AgentTools:
    """The agent's toolsets, the instructions they add, and its per-session toolsets.
    `options` and `hosting` completed for `spec` (`for_agent`)."""
    context = tool_context(spec, options, hosting)
    functions: FunctionToolset[Any] = FunctionToolset()
    sets: list[AbstractToolset[Any]] = [functions]
    typescript: list[TypeScriptTool] = []
    mcp: list[McpTool] = []
    searches: list[SearchTool] = []
    for tool in spec.tools:
        if isinstance(tool, FunctionTool):
            functions.add_tool(function_tool(tool, spec.root, spec.params))
        elif isinstance(tool, PromptTool):
            functions.add_tool(prompt_tool(tool, spec.root, _prompt_runner(spec, options, hosting)))
        elif isinstance(tool, AgentTool):
            pass  # added with the image's sub-agents below: both live in spec.subagents
        elif isinstance(tool, A2ATool):
            functions.add_tool(a2a_tool(tool, context.outbound))
        elif isinstance(tool, TypeScriptTool):
            typescript.append(tool)
        elif isinstance(tool, McpTool):
            mcp.append(tool)
        elif isinstance(tool, VectorstoreTool | HierarchicalDocumentTool):
            searches.append(tool)
    if typescript:  # one Node process serves all of them
        sets.append(typescript_toolset(typescript, spec.root, spec.params))
    if searches:  # indexes open and catch up with their sources on start() or first use
        from holodeck.search.agent_tools import SearchTools  # deferred: numpy, the pipeline

        sets.append(SearchToolset(SearchTools(searches, spec, context)))
    shared = [t for t in mcp if t.scope == "agent"]
    own = [t for t in mcp if t.scope == "session"]
    others = len(shared) < len(spec.tools) or bool(
        spec.subagents or spec.builtins or spec.skills or spec.workspace or spec.memory.long_term
    )
    reserved = [t.name for t in spec.tools if not isinstance(t, McpTool)] + list(spec.subagents)
    env = context.env
    # an uploaded definition's MCP `url`s pass the outbound policy; the operator's do not
    outbound = context.outbound if context.uploaded else None
    if shared:  # servers start on Agent.start() or first use, and stay up until aclose()
        sets.append(
            mcp_toolset(
                shared,
                spec.root,
                env,
                spec.source,
                reserved=reserved,
                alone=not others,
                outbound=outbound,
            )
        )
    if spec.subagents:
        sets.append(subagent_toolset(spec, options, hosting, make_agent))
    memory = None
    if spec.memory.long_term is not None:  # its stores open on first use
        from holodeck.memory import open_bank  # deferred: the search stores, numpy

        bank = open_bank(spec, context)
        assert bank is not None  # there is a long_term block
        memory = MemoryToolset(bank, spec.memory.long_term)
        sets.append(memory)
    if spec.builtins:
        sets.append(builtin_toolset(spec, context))
    instructions = None
    if spec.skills:
        sets.append(skills_toolset(spec.skills))
        instructions = skills_prompt(spec.skills)
    middleware = Middleware.load(list(spec.middleware))

    timeouts = {
        t.name: t.timeout
        for t in spec.tools
        if isinstance(t, FunctionTool | TypeScriptTool) and t.timeout is not None
    }
    redact = spec.logging.redact_content
    guards = CallGuards.of(spec)
    observed = ObservedToolset(
        offered(CombinedToolset(sets), spec.tools_policy),
        observer=TURN_OBSERVER,
        middleware=middleware,
        timeouts=timeouts,
        redact_errors=redact,
        guards=guards,
    )
    per_session = None
    if own or spec.workspace is not None:

        def per_session(session_id: str | None, given: Path | None) -> list[AbstractToolset[Any]]:
            made: list[AbstractToolset[Any]] = []
            if own:
                made.append(
                    mcp_toolset(
                        own, spec.root, env, spec.source, reserved=reserved, outbound=outbound
                    )
                )
            if spec.workspace is not None:  # a folder and terminals per conversation
                made.append(workspace_toolset(spec, hosting, session_id, given))
            return [
                ObservedToolset(
                    offered(toolset, spec.tools_policy),
                    observer=TURN_OBSERVER,
                    middleware=middleware,
                    redact_errors=redact,
                    guards=guards,
                )
                for toolset in made
            ]

    return AgentTools([observed], instructions, per_session, memory)


def offered(toolset: AbstractToolset[Any], policy: ToolsPolicy | None) -> AbstractToolset[Any]:
    """`toolset` without the tools `policy` denies: the model is never offered them. An
    MCP tool is matched by the name the model sees and as `server.tool`."""
    if policy is None:
        return toolset

    def allowed(ctx: RunContext[Any], tool: ToolDefinition) -> bool:
        meta = tool.metadata or {}
        if "mcp_server" in meta and "mcp_tool" in meta:
            return policy.allows(tool.name, f"{meta['mcp_server']}.{meta['mcp_tool']}")
        return policy.allows(tool.name)

    return toolset.filtered(allowed)


def _prompt_runner(spec: AgentSpec, options: RunOptions, hosting: Hosting) -> Any:
    """Runs a prompt tool's request with its own model, or the agent's."""
    cache: dict[int, Any] = {}

    async def ask(prompt: str, own: Any, ctx: RunContext[Any]) -> str:
        key = id(own)
        if key not in cache:
            built = choose_model(own or spec.model, options, spec.execution, hosting=hosting)
            cache[key] = PydanticAgent(built.model, model_settings=built.settings or None)  # type: ignore[arg-type]
            turn = CURRENT_TURN.get()
            if turn is not None and turn.telemetry is not None:  # its model call, traced
                cache[key].instrument = instrumentation(turn.telemetry)
        result = await cache[key].run(prompt, usage=ctx.usage)
        return str(result.output)

    return ask
