"""The shipped HoloDeck's spend cap, fallback model and tool lists (`claude:` /
`openai:` keys), moved to the controls that do the same here:

- `max_budget_usd` -> `limits.session.max_cost_usd`
- `fallback_model` -> `model.fallbacks`
- `allowed_tools` / `disallowed_tools` -> `tools_policy.allow` / `.deny`
  (a Claude Code MCP name `mcp__server__tool` is written `server.tool` here)."""

from __future__ import annotations

from typing import Any

CONTROL_KEYS = {
    "max_budget_usd": "limits.session.max_cost_usd",
    "fallback_model": "model.fallbacks",
    "allowed_tools": "tools_policy.allow",
    "disallowed_tools": "tools_policy.deny",
}


def move_controls(block_name: str, block: dict[str, Any], out: dict[str, Any]) -> None:
    """Take the control keys out of `block` into `out` (the agent.yaml document)."""
    for key, target in CONTROL_KEYS.items():
        if key not in block:
            continue
        value = block[key]
        section, *rest = target.split(".")
        current = out.get(section)
        if current is not None and not isinstance(current, dict):
            continue  # the section itself is wrong: validation reports it there
        nested = dict(current or {})
        node = nested
        for part in rest[:-1]:
            node[part] = dict(node.get(part) or {})
            node = node[part]
        leaf = rest[-1]
        if leaf in node:
            raise ValueError(
                f"give `{target}` or `{block_name}.{key}`, not both "
                f"(`{block_name}.{key}` is `{target}` here)"
            )
        node[leaf] = _converted(key, value)
        out[section] = nested
        del block[key]


def _converted(key: str, value: Any) -> Any:
    if key == "fallback_model":
        return [value] if isinstance(value, str) else value
    if key in ("allowed_tools", "disallowed_tools") and isinstance(value, list):
        return [_tool_pattern(v) for v in value]
    return value


def _tool_pattern(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("mcp__"):
        server, _, tool = value[len("mcp__") :].partition("__")
        return f"{server}.{tool or '*'}"
    return value
