"""Builtins that only an Omnigent server provides, each refused with what it is and what
to use here instead: they read and write the server's file store or its Hindsight memory
bank, neither of which exists when HoloDeck runs the agent."""

from __future__ import annotations

_FILES = (
    "HoloDeck has no file store; for files, add an MCP filesystem server "
    "(tools/mcp/files.yaml: `{name: files, transport: stdio, command: npx, args: "
    "[-y, '@modelcontextprotocol/server-filesystem', ./data]}`)"
)
_MEMORY = (
    "HoloDeck has no long-term memory bank; chat and the server keep the conversation "
    "(config.yaml `memory:`); for memory across conversations, add an MCP memory server "
    "such as @modelcontextprotocol/server-memory under tools/mcp/"
)

SERVER_ONLY: dict[str, tuple[str, str]] = {
    "upload_file": ("stores a file in the Omnigent server's file store", _FILES),
    "list_files": ("lists the Omnigent server's file store", _FILES),
    "download_file": ("reads a file from the Omnigent server's file store", _FILES),
    "hindsight_retain": ("stores a fact in a Hindsight long-term memory bank", _MEMORY),
    "hindsight_recall": ("searches a Hindsight long-term memory bank", _MEMORY),
    "hindsight_reflect": ("answers from a Hindsight long-term memory bank", _MEMORY),
}


def server_only(name: str) -> tuple[str, str] | None:
    """(message, hint) when `name` is a builtin only an Omnigent server has."""
    if name in SERVER_ONLY:
        what, instead = SERVER_ONLY[name]
        return f"builtin `{name}` {what}, which needs an Omnigent server", instead
    if name.startswith("hindsight_"):
        return (
            f"builtin `{name}` uses Hindsight long-term memory, which needs an Omnigent server",
            _MEMORY,
        )
    return None
