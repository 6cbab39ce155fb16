"""Tools declared inline in config.yaml, as Omnigent allows beside the directory layout:

    tools:
      github: {type: mcp, command: npx, args: [-y, "@modelcontextprotocol/server-github"]}
      critic: {type: agent, description: ..., prompt: ..., executor: {model: ...}}

An inline `mcp` entry is read like a tools/mcp/<name>.yaml file (the key is its name, the
transport follows from `command` or `url`); an inline `agent` entry is a sub-agent defined
in place, callable without being listed in `tools.agents`; an inline `a2a` entry is a
remote agent reached over A2A (`url`, optional `headers` and `timeout`), as in agent.yaml;
an inline `handoff` entry (`target_agent`, `description`) transfers the conversation to
another agent (`handoffs.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from holodeck.spec.diagnostics import FieldPath

# Keys of the `tools:` block itself; every other key names an inline tool.
BLOCK_KEYS = frozenset({"agents", "builtins", "timeout", "retry"})
INLINE_TYPES = ("mcp", "agent", "a2a", "handoff")

# Inline MCP keys with no counterpart here, with what to write instead.
MCP_REFUSED = {
    "auth": "Databricks credentials are resolved by an Omnigent server; pass a token in "
    "`headers` (e.g. `Authorization: Bearer ${TOKEN}`)",
    "profile": "Databricks credentials are resolved by an Omnigent server; pass a token in "
    "`headers` (e.g. `Authorization: Bearer ${TOKEN}`)",
    "databricks_server": "Databricks-managed MCP servers are reached through an Omnigent "
    "server; give the server's `url` instead",
    "tool_name": "not supported; list the server's tools to expose in `tools: [...]`",
}
# Inline agent keys with no counterpart here, with what to write instead.
AGENT_REFUSED = {
    "os_env": "an inline sub-agent gets no workspace of its own; write it out as "
    "agents/<name>/config.yaml with its own `os_env`, or give the calling agent `os_env`",
    "pass_history": "a sub-agent here receives only the task the caller writes; remove it "
    "and put the context the sub-agent needs in the task",
    "pass_histories": "a sub-agent here receives only the task the caller writes; remove it "
    "and put the context the sub-agent needs in the task",
    "max_sessions": "each call runs the sub-agent once; remove it",
    "spec": "`spec: self` (a copy of the calling agent) is not supported; write the "
    "sub-agent's `prompt` and `tools` out",
}


@dataclass(frozen=True)
class InlineTool:
    """One inline entry: its name, its `type`, its settings, and where it was written."""

    name: str
    kind: str
    data: dict[str, Any]
    path: FieldPath


def split_tools(
    tools: Any, base: FieldPath = ("tools",)
) -> tuple[Any, list[InlineTool], list[FieldPath]]:
    """The `tools:` block without its inline entries, the inline entries, and the paths of
    entries that are neither (reported by the caller)."""
    if not isinstance(tools, dict):
        return tools, [], []
    block: dict[str, Any] = {}
    inline: list[InlineTool] = []
    unknown: list[FieldPath] = []
    for key, value in tools.items():
        if key in BLOCK_KEYS:
            block[key] = value
        elif isinstance(value, dict) and value.get("type") in INLINE_TYPES:
            inline.append(InlineTool(str(key), str(value["type"]), dict(value), (*base, key)))
        elif isinstance(value, dict) and "type" in value:
            unknown.append((*base, key))
        else:
            block[key] = value  # reported by the schema as an unknown key of `tools`
    return block, inline, unknown


def mcp_file_data(entry: InlineTool) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The entry as a tools/mcp file's fields, and the refused keys with their hints."""
    data = {k: v for k, v in entry.data.items() if k != "type" and k not in MCP_REFUSED}
    refused = [(k, MCP_REFUSED[k]) for k in entry.data if k in MCP_REFUSED]
    data["name"] = entry.name
    if "transport" not in data:
        # Omnigent infers it: a command is spawned (stdio), a url is reached over HTTP.
        data["transport"] = "stdio" if "command" in data else "http"
    return data, refused
