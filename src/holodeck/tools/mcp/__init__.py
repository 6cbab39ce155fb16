"""MCP servers as tools, on the official `mcp` SDK: `mcp_servers(tools, root, env)`
gives the connections of an agent's `type: mcp` entries (the runtime offers their tools
to the model: `holodeck.runtime.toolsets.mcp_toolset`), and `aclose()` stops a server.

Each server (`type: mcp` in agent.yaml, or an image's tools/mcp/*.yaml) is started once per
agent (`scope: agent`, shared by every conversation) or once per conversation
(`scope: session`), when the agent or session is entered or on the first turn that needs its
tools, and kept until `aclose()`. Its tools are exposed as `<server>_<tool>`, with schemas
rewritten for the providers (`schema`). Connections live on the caller's event loop, held
by a task of their own so that a server outlives the turn that started it; when that loop
ends, its servers are stopped with it.

Failures: a server that cannot start (missing command, exits, hangs past
`startup_timeout`, unreachable URL) is logged once as a warning naming it and what to check;
its tools are absent and the agent goes on with the others (`ToolLoadError` only when it
would have no tool at all). It is tried again on a later turn. A stdio server that stops is
restarted on the next call; a call that fails because its server stopped, was unreachable
or gave no answer within `timeout` is retried `retry.max_retries` times with backoff. A tool
that reports an error fails like any other tool (recorded on the event; the model gets "").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from holodeck.net import OutboundPolicy
from holodeck.spec.models.tools import McpTool
from holodeck.tools.mcp._connection import (
    CALL_TIMEOUT_S,
    HTTP_STARTUP_S,
    LIST_PAGES,
    STDIO_STARTUP_S,
    STOP_GRACE_S,
    McpServer,
)
from holodeck.tools.mcp._errors import McpServerError, McpToolError
from holodeck.tools.mcp._launch import FILESYSTEM_PACKAGE, _launch
from holodeck.tools.mcp.schema import (
    TOOL_NAME,
    ArgShape,
    ToolSchema,
    exposed_name,
    model_schema,
    strip_nulls,
)

__all__ = [
    "CALL_TIMEOUT_S",
    "FILESYSTEM_PACKAGE",
    "HTTP_STARTUP_S",
    "LIST_PAGES",
    "STDIO_STARTUP_S",
    "STOP_GRACE_S",
    "TOOL_NAME",
    "ArgShape",
    "McpServer",
    "McpServerError",
    "McpToolError",
    "ToolSchema",
    "exposed_name",
    "mcp_servers",
    "model_schema",
    "strip_nulls",
]


def mcp_servers(
    tools: Sequence[McpTool],
    root: Path,
    env: Mapping[str, str],
    source: Path | None = None,
    outbound: OutboundPolicy | None = None,
) -> list[McpServer]:
    """The servers of `tools`, not started yet. `outbound`: the policy an HTTP server's
    `url` must pass (an uploaded definition's), None when the operator wrote the `url`."""
    launches = [_launch(tool, root.resolve(), env, source, outbound) for tool in tools]
    return [McpServer(tool, launch) for tool, launch in zip(tools, launches, strict=True)]
