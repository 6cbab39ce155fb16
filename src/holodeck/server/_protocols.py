"""The protocols every served agent speaks, and where: /v1/agents, /ready and
/openapi.json list them from here, so a protocol is one entry to add."""

from __future__ import annotations

# protocol -> the paths it answers on ({agent}: the agent's name)
PROTOCOLS: dict[str, tuple[str, ...]] = {
    "chat": ("/v1/chat",),
    "openai": ("/v1/chat/completions",),
    "ag-ui": ("/awp", "/awp/{agent}"),
    "mcp": ("/mcp",),
}

# where a refused request is an API request, logged in the agent's request log
API_PREFIXES = ("/v1/", "/awp", "/mcp")


def protocols() -> list[str]:
    """What each agent speaks (all of them speak every protocol the server serves)."""
    return list(PROTOCOLS)
