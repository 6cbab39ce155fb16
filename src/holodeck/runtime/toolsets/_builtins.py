"""The builtins' tools for an agent: function tools (`builtin_toolset`) and native
tools run by the model's provider (`builtin_capabilities`)."""

from __future__ import annotations

from typing import Any

from pydantic_ai import FunctionToolset
from pydantic_ai.capabilities import AbstractCapability, NativeTool
from pydantic_ai.native_tools import WebSearchTool
from pydantic_ai.toolsets import AbstractToolset

from holodeck.llm.tool_context import ToolContext
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.tools.builtins import (
    FETCH_LIMITS,
    SEARCH_TIMEOUT,
    FetchLimits,
    offline_web_search,
    provider_search,
    search_backend,
    web_fetch_tool,
)


def builtin_toolset(
    spec: AgentSpec,
    options: ToolContext,
    *,
    fetch_limits: FetchLimits = FETCH_LIMITS,
    search_timeout: float = SEARCH_TIMEOUT,
) -> AbstractToolset[Any]:
    """The function tools for `spec.builtins`, `web_fetch` reading within `fetch_limits`
    and a provider's `web_search` ending after `search_timeout` seconds. A native
    `web_search` is not among them: the agent gets it from `builtin_capabilities`."""
    toolset: FunctionToolset[Any] = FunctionToolset()
    env, policy = options.env, options.outbound
    for builtin in spec.builtins:
        if builtin.name == "web_fetch":
            fetch = web_fetch_tool(policy, fetch_limits)
            toolset.add_function(fetch, name="web_fetch", takes_ctx=False)
            continue
        backend = search_backend(spec, options, builtin)
        if backend == "provider":
            search = provider_search(builtin, env, spec, policy, search_timeout)
            toolset.add_function(search, name="web_search", takes_ctx=False)
        elif backend == "offline":
            toolset.add_function(offline_web_search, name="web_search", takes_ctx=False)
    return toolset


def builtin_capabilities(spec: AgentSpec, options: ToolContext) -> list[AbstractCapability[Any]]:
    """The native tools for `spec.builtins`, for `Agent(capabilities=...)`: OpenAI's
    server-side web search when `web_search` has no provider and the model is OpenAI's."""
    for builtin in spec.builtins:
        if builtin.name == "web_search" and search_backend(spec, options, builtin) == "native":
            return [NativeTool[Any](WebSearchTool())]
    return []
