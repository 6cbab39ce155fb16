"""The toolset the agent sees of its MCP servers: every server's tools under their exposed
names (the servers themselves are `holodeck.tools.mcp`'s)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from holodeck.net import OutboundPolicy
from holodeck.runtime._held import Held
from holodeck.runtime.toolsets._mcp_content import model_content
from holodeck.runtime.toolsets._schema_tools import schema_tool
from holodeck.spec.models.tools import McpTool
from holodeck.tools.errors import ToolLoadError
from holodeck.tools.mcp import (
    ArgShape,
    McpServer,
    exposed_name,
    mcp_servers,
    model_schema,
    strip_nulls,
)

log = logging.getLogger("holodeck.tools.mcp")


def mcp_toolset(
    tools: Sequence[McpTool],
    root: Path,
    env: Mapping[str, str],
    source: Path | None = None,
    *,
    reserved: Sequence[str] = (),
    alone: bool = False,
    outbound: OutboundPolicy | None = None,
) -> McpToolset:
    """The tools of `tools`' servers. `reserved`: names other tools of the agent use;
    `alone`: the agent has no other tool, so no server at all is an error, not a warning;
    `outbound`: the policy an HTTP server's `url` must pass (an uploaded definition's),
    None when the operator wrote the `url`."""
    servers = mcp_servers(tools, root, env, source, outbound)
    return McpToolset(servers, source=source, reserved=reserved, alone=alone)


@dataclass(frozen=True)
class _Entry:
    server: McpServer
    original: str
    definition: ToolDefinition
    shape: ArgShape | None


class McpToolset(Held, AbstractToolset[Any]):
    """The tools of several MCP servers. Servers start when the first holder enters the
    toolset (the agent opening, or its session's scope) or on first use, and stay up until
    the last leaves (`Held`); each run entering and leaving it does not stop them.
    They run on the event loop that started them; when that loop ends, so do they."""

    def __init__(
        self,
        servers: Sequence[McpServer],
        *,
        source: Path | None = None,
        reserved: Sequence[str] = (),
        alone: bool = False,
    ) -> None:
        self._servers = list(servers)
        self._source = source
        self._reserved = set(reserved)
        self._alone = alone
        self._entries: dict[str, _Entry] = {}  # every tool offered so far, by exposed name
        self._built: dict[str, tuple[Any, list[_Entry]]] = {}
        self._reported: dict[str, str] = {}

    @property
    def id(self) -> str | None:
        return "holodeck-mcp"

    @property
    def servers(self) -> list[str]:
        return [s.name for s in self._servers]

    def running(self) -> dict[str, bool]:
        """Whether each server has a live connection (False before its first use)."""
        return {s.name: s.alive() for s in self._servers}

    def unavailable(self) -> dict[str, str]:
        """Servers that could not be started, with the reason."""
        return {s.name: s.failure for s in self._servers if s.failure is not None}

    def starts(self) -> int:
        """Connections opened so far, over all servers and restarts."""
        return sum(s.starts for s in self._servers)

    async def start(self) -> None:
        """Start every server now (each failure is reported once, as on first use)."""
        await _ready_all(self._servers)
        self._report()

    async def aclose(self) -> None:
        """Stop every server of this toolset (idempotent)."""
        await asyncio.gather(*(s.close() for s in self._servers), return_exceptions=True)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        await _ready_all(self._servers)
        self._report()
        taken = set(self._reserved)
        entries: dict[str, _Entry] = {}
        for server in self._servers:
            if server.failure is not None or server.client is None:
                continue
            key = (server.generation, frozenset(taken))  # names depend on those before
            built = self._built.get(server.name)
            if built is None or built[0] != key:
                built = (key, self._entries_of(server, taken))
                self._built[server.name] = built
            for entry in built[1]:
                taken.add(entry.definition.name)
                entries[entry.definition.name] = entry
        self._entries.update(entries)
        return {name: schema_tool(self, e.definition, ctx) for name, e in entries.items()}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        entry = self._entries[name]
        args = strip_nulls(tool_args, entry.shape)
        result = await entry.server.call(entry.original, args)
        return model_content(result, f"{entry.server.name}/{entry.original}")

    def _entries_of(self, server: McpServer, taken: set[str]) -> list[_Entry]:
        offered = {t.name: t for t in server.tools}
        wanted = server.tool.tools
        if wanted is not None:
            missing = [w for w in wanted if w not in offered]
            if missing:
                log.warning(
                    "MCP server `%s` has no tool %s (listed in `tools:`); it offers: %s",
                    server.name,
                    ", ".join(f"`{m}`" for m in missing),
                    ", ".join(sorted(offered)) or "none",
                )
        entries: list[_Entry] = []
        names = set(taken)
        for mcp_tool in server.tools:
            if wanted is not None and mcp_tool.name not in wanted:
                continue
            name = exposed_name(server.name, mcp_tool.name, names)
            names.add(name)
            schema = model_schema(mcp_tool.input_schema)
            description = mcp_tool.description or mcp_tool.title or mcp_tool.name
            hints = mcp_tool.annotations
            annotations = (
                hints.model_dump(exclude_none=True, by_alias=True) if hints is not None else {}
            )
            if server.tool.description:
                description += f"\n\n(MCP server `{server.name}`: {server.tool.description})"
            definition = ToolDefinition(
                name=name,
                description=description,
                parameters_json_schema=schema.schema,
                strict=None if schema.strict_ok else False,
                metadata={
                    "mcp_server": server.name,
                    "mcp_tool": mcp_tool.name,
                    "mcp_annotations": annotations,  # the offline model reads destructiveHint
                },
            )
            entries.append(_Entry(server, mcp_tool.name, definition, schema.shape))
        return entries

    def _report(self) -> None:
        """Each failure once; and, when all servers failed and the agent has nothing
        else, a ToolLoadError."""
        for server in self._servers:
            failure = server.failure
            if failure is None:
                if self._reported.pop(server.name, None) is not None:
                    log.info("MCP server `%s` is available again", server.name)
            elif self._reported.get(server.name) != failure:
                self._reported[server.name] = failure
                log.warning("%s; its tools are unavailable for now", failure)
        if self._alone and self._servers and all(s.failure for s in self._servers):
            reasons = "; ".join(str(s.failure) for s in self._servers)
            raise ToolLoadError(f"no tools: every MCP server failed: {reasons}", self._source)


async def _ready_all(servers: Sequence[McpServer]) -> None:
    await asyncio.gather(*(s.ready() for s in servers))
