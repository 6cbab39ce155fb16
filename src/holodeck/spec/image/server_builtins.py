"""Builtins that only an Omnigent server provides, each refused with what it is and what
to use here instead: they read and write the server's file store or its Hindsight memory
bank, neither of which exists when HoloDeck runs the agent. The two Hindsight builtins
whose meaning long-term memory has (`MEMORY_BUILTINS`) are read into `memory.long_term`."""

from __future__ import annotations

_FILES = (
    "HoloDeck has no file store; for files, add an MCP filesystem server "
    "(tools/mcp/files.yaml: `{name: files, transport: stdio, command: npx, args: "
    "[-y, '@modelcontextprotocol/server-filesystem', ./data]}`)"
)
_MEMORY = (
    "HoloDeck's long-term memory stores and searches facts: list `hindsight_retain` and "
    "`hindsight_recall` (or set `memory: {long_term: {}}` in config.yaml, docs/memory.md); "
    "to have memories before each turn, set `memory.long_term.recall.auto: true`"
)
# Hindsight builtins -> the long-term memory tool that does the same (stores a fact,
# searches the facts), offered under the builtin's name
MEMORY_BUILTINS: dict[str, str] = {"hindsight_retain": "remember", "hindsight_recall": "recall"}

SERVER_ONLY: dict[str, tuple[str, str]] = {
    "upload_file": ("stores a file in the Omnigent server's file store", _FILES),
    "list_files": ("lists the Omnigent server's file store", _FILES),
    "download_file": ("reads a file from the Omnigent server's file store", _FILES),
    "hindsight_reflect": (
        "answers a question by a model's reasoning over a Hindsight memory bank",
        _MEMORY,
    ),
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
