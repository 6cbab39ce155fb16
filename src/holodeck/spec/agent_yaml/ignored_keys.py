"""agent.yaml keys of the shipped HoloDeck that only tune something this runtime does not
have: taken out before validation and reported as warnings saying why they have no effect
(errors with `--strict`). Keys whose loss would change what the agent says or does are
never here: they work, or are refused with what to write."""

from __future__ import annotations

from typing import Any

from holodeck.spec.diagnostics import Collector, Severity
from holodeck.spec.yaml.source import YamlDocument

# top-level key -> (why it has no effect here, what to do)
IGNORED: dict[str, tuple[str, str]] = {
    "tool_filtering": (
        "`tool_filtering` narrowed the tools offered to the model on each request to save "
        "tokens; here every tool is offered on every request",
        "remove it; to offer fewer tools, list fewer under `tools:` (an MCP tool's `tools:` "
        "list limits what its server offers)",
    ),
}


_NO_PROMPTS = "MCP prompts are never loaded here, only tools"

# An MCP tool's keys that have no effect here, with the values they have no effect at
# (None: any value); other values change what the agent does and are refused.
MCP_IGNORED: dict[str, tuple[tuple[object, ...] | None, str, str]] = {
    "sse_read_timeout": (
        None,
        "`sse_read_timeout` limited waiting between SSE events; here one tool call is "
        "limited as a whole",
        "remove it; `timeout` sets the seconds one tool call may take",
    ),
    "terminate_on_close": (
        None,
        "`terminate_on_close` chose how an HTTP session ends; here the session of an HTTP "
        "server is always ended when the agent stops",
        "remove it",
    ),
    "registry_name": (
        None,
        "`registry_name` recorded which MCP registry entry the server came from; nothing "
        "here reads it",
        "remove it, or keep it as a YAML comment",
    ),
    "load_prompts": (None, f"`load_prompts` has no effect: {_NO_PROMPTS}", "remove it"),
    "load_tools": (
        (True,),
        "`load_tools: true` is what happens here: the server's tools are offered",
        "remove it",
    ),
    "is_retrieval": (
        (True,),
        "`is_retrieval: true` is what happens here: every tool's result is retrieval "
        "context for the RAG metrics",
        "remove it",
    ),
    "encoding": (
        ("utf-8", "UTF-8", "utf8", "UTF8"),
        "`encoding` has no effect: a stdio MCP server speaks UTF-8 here",
        "remove it",
    ),
}


def drop_ignored(data: Any, doc: YamlDocument, collector: Collector, *, strict: bool) -> Any:
    """`data` without the keys of `IGNORED` and those of each MCP tool that have no
    effect (`MCP_IGNORED`), each reported at its line."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for key in sorted(IGNORED.keys() & out.keys()):
        why, fix = IGNORED[key]
        _report(doc, collector, (key,), why, fix, strict)
        del out[key]
    tools = out.get("tools")
    if isinstance(tools, list):
        out["tools"] = [
            _mcp_tool(t, (index,), doc, collector, strict) for index, t in enumerate(tools)
        ]
    return out


def _mcp_tool(
    tool: Any, where: tuple[int], doc: YamlDocument, collector: Collector, strict: bool
) -> Any:
    if not isinstance(tool, dict) or tool.get("type") != "mcp":
        return tool
    kept = dict(tool)
    for key in sorted(MCP_IGNORED.keys() & kept.keys()):
        values, why, fix = MCP_IGNORED[key]
        if values is None or any(kept[key] == v and type(kept[key]) is type(v) for v in values):
            _report(doc, collector, ("tools", *where, key), why, fix, strict)
            del kept[key]
    return kept


def _report(
    doc: YamlDocument,
    collector: Collector,
    path: tuple[str | int, ...],
    why: str,
    fix: str,
    strict: bool,
) -> None:
    collector.add(
        doc.diagnostic(
            path,
            why if strict else f"ignored: {why}",
            hint=fix,
            severity=Severity.ERROR if strict else Severity.WARNING,
        )
    )
