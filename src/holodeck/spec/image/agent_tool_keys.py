"""Omnigent config keys that give the agent tools of the Omnigent runtime: `os_env` (its
shell and file tools), `terminals` (interactive terminals it launches), `timers` (timer
tools) and `spawn` (starting sessions of other agents). HoloDeck does not provide those
tools yet; running the agent without them would change what it can do, so each is an
error saying so, not a key dropped with a warning. A value that turns nothing on
(`timers: false`, `os_env: null`, an empty mapping) changes nothing and is accepted."""

from __future__ import annotations

from typing import Any

from holodeck.spec.image.executor import Report

_NOT_YET = "HoloDeck does not provide these tools yet, and the agent would run without them"
AGENT_TOOL_KEYS: dict[str, tuple[str, str]] = {
    "os_env": (
        f"`os_env` gives the agent Omnigent's shell and file tools (read, write and edit "
        f"files, run commands); {_NOT_YET}",
        "to keep file access, give it an MCP filesystem server: `tools: {files: {type: "
        "mcp, command: npx, args: [-y, '@modelcontextprotocol/server-filesystem', DIR]}}`; "
        "remove `os_env` if the agent needs neither",
    ),
    "terminals": (
        f"`terminals` lets the agent launch interactive terminals; {_NOT_YET}",
        "remove it, or give the agent the commands it needs as tools (tools/python/, "
        "or an MCP server under tools/mcp/)",
    ),
    "timers": (
        f"`timers` gives the agent timer tools (to be woken after a delay); {_NOT_YET}",
        "remove it (or write `timers: false`)",
    ),
    "spawn": (
        f"`spawn` lets the agent start and message sessions of other agents; {_NOT_YET}",
        "remove it; to delegate work, list sub-agents in `tools.agents` or declare an "
        "inline `{type: agent}` tool, which the agent calls as a tool",
    ),
}


def refuse_agent_tool_keys(data: dict[str, Any], report: Report) -> None:
    """Take the keys of `AGENT_TOOL_KEYS` out of `data`, reporting each that turns
    something on."""
    for key, (message, hint) in AGENT_TOOL_KEYS.items():
        if key not in data:
            continue
        value = data.pop(key)
        if value is None or value is False or value == {} or value == []:
            continue
        report((key,), message, hint)
