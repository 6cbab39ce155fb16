"""A definition's TypeScript tools as a pydantic-ai toolset over one `TypeScriptRunner`
(`holodeck.tools.typescript` runs them in Node.js)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from holodeck.runtime._held import Held
from holodeck.runtime.toolsets._schema_tools import schema_tool
from holodeck.spec.models.tools import TypeScriptTool
from holodeck.tools.typescript import Described, MissingArguments, TypeScriptRunner


def typescript_toolset(
    tools: Sequence[TypeScriptTool], root: Path, params: Mapping[str, Any]
) -> TypeScriptToolset:
    """A toolset running `tools` (files relative to `root`) with Node.js, for an agent:
    its Node.js process outlives each turn and stops with `aclose()` (or, never closed,
    when Python exits and its stdin closes).

    A parameter named `params` receives the image's `params` and is not in the schema.
    """
    return TypeScriptToolset(TypeScriptRunner(tools, root, params, persistent=True))


class TypeScriptToolset(Held, AbstractToolset[Any]):
    """TypeScript functions as tools, all served by the runner's one Node.js process."""

    def __init__(self, runner: TypeScriptRunner, toolset_id: str | None = None) -> None:
        self.runner = runner
        self._id = toolset_id

    @property
    def id(self) -> str | None:
        return self._id

    @property
    def process_id(self) -> int | None:
        """The id of the running Node.js process, if one runs."""
        return self.runner.process_id

    async def __aenter__(self) -> TypeScriptToolset:
        self.runner.enter()  # a runner that is not persistent stops Node.js after its uses
        return await super().__aenter__()

    async def __aexit__(self, *args: Any) -> bool | None:
        self.runner.leave()
        return await super().__aexit__(*args)  # the last holder stops Node.js

    async def aclose(self) -> None:
        """Stop Node.js; the next use starts it again."""
        self.runner.close()

    def close(self) -> None:
        """Kill the Node.js process (and anything it started); calls in flight fail."""
        self.runner.close()

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        described = await self.runner.describe()
        return {
            name: schema_tool(self, _definition(name, entry), ctx)
            for name, entry in described.items()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        try:
            return await self.runner.call(name, tool_args)
        except MissingArguments as missing:
            raise ModelRetry(str(missing)) from None


def _definition(name: str, entry: Described) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        parameters_json_schema=entry.parameters,
        description=entry.description,
        metadata={"file": entry.tool.file, "function": entry.tool.function},
    )
