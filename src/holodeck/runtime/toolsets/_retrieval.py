"""The agent's search tools (`holodeck.search.agent_tools.SearchTools`) as a pydantic-ai
toolset: one function tool per search tool, taking the query."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic_ai import FunctionToolset, RunContext, Tool
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from holodeck.runtime._held import Held
from holodeck.spec.models.tools import SearchTool

if TYPE_CHECKING:  # the search pipeline and numpy load only for an agent with a search tool
    from holodeck.search.agent_tools import SearchTools


class SearchToolset(Held, AbstractToolset[Any]):
    """`tools` offered to the model; `start()` ingests every source, `aclose()` closes.

    Not a wrapper toolset: `Agent.start()` finds toolsets with `start()` by visiting them,
    and a wrapper would show the visitor only what it wraps."""

    def __init__(self, tools: SearchTools) -> None:
        self._tools = tools
        functions: FunctionToolset[Any] = FunctionToolset()
        for tool in tools.tools:
            functions.add_tool(self._tool(tool))
        self._functions = functions

    @property
    def id(self) -> str | None:
        return "holodeck-search"

    @property
    def retry_after_s(self) -> float:
        """How long after a failure to open an index it is tried again."""
        return self._tools.retry_after_s

    @retry_after_s.setter
    def retry_after_s(self, seconds: float) -> None:
        self._tools.retry_after_s = seconds

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await self._functions.get_tools(ctx)
        return {name: replace(tool, toolset=self) for name, tool in tools.items()}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        return await self._functions.call_tool(
            name, tool_args, ctx, replace(tool, toolset=self._functions)
        )

    def _tool(self, tool: SearchTool) -> Tool[Any]:
        name = tool.name
        tools = self._tools

        async def search(query: str) -> list[dict[str, Any]]:
            return await tools.search(name, query)

        search.__doc__ = f"{tool.description}\n\nArgs:\n    query: What to look for."
        return Tool(search, name=tool.name, description=tool.description, takes_ctx=False)

    def failures(self) -> dict[str, str]:
        """Each search tool whose index could not be opened -> why (see `SearchTools`)."""
        return self._tools.failures()

    async def start(self) -> None:
        await self._tools.start()

    async def aclose(self) -> None:
        await self._tools.aclose()
