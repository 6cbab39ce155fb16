"""Omnigent config keys that give the agent tools of the Omnigent runtime that HoloDeck
does not offer: `timers` (timer tools) and `spawn` (starting sessions of other agents).
Running the agent without them would change what it can do, so each is an error saying
so, not a key dropped with a warning. A value that turns nothing on (`timers: false`,
`spawn: null`, an empty mapping) changes nothing and is accepted. (`os_env` and
`terminals` are read into the workspace tools: `acting_tools.py`.)"""

from __future__ import annotations

from typing import Any

from holodeck.spec.image.executor import Report

_NOT_YET = "HoloDeck does not offer these tools, and the agent would run without them"
AGENT_TOOL_KEYS: dict[str, tuple[str, str]] = {
    "timers": (
        f"`timers` gives the agent timer tools (to be woken after a delay); {_NOT_YET}",
        "remove it (or write `timers: false`); a command that must wait can run in a "
        "terminal (`terminals:`)",
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
