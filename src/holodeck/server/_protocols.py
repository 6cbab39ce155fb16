"""The protocols every served agent speaks, and where: /v1/agents, /ready and
/openapi.json list them from here, so a protocol is one entry to add."""

from __future__ import annotations

import importlib.util

# protocol -> the paths it answers on ({agent}: the agent's name)
PROTOCOLS: dict[str, tuple[str, ...]] = {
    "chat": ("/v1/chat",),
    "openai": ("/v1/chat/completions",),
    "ag-ui": ("/awp", "/awp/{agent}"),
    "mcp": ("/mcp",),
    "a2a": ("/a2a/{agent}", "/.well-known/agent-card.json"),
}

# where a refused request is an API request, logged in the agent's request log
API_PREFIXES = ("/v1/", "/awp", "/mcp", "/a2a")


def a2a_available() -> bool:
    """Whether the a2a-sdk package is installed (found, not imported)."""
    return importlib.util.find_spec("a2a") is not None


def protocols() -> list[str]:
    """What each agent speaks: every protocol the server serves (A2A when its package
    is installed)."""
    return [p for p in PROTOCOLS if p != "a2a" or a2a_available()]
