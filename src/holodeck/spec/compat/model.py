"""Model settings written the shipped HoloDeck's way: provider entries in config.yaml
that carry the model and its sampling settings, `auth_provider`, and the `claude:` /
`openai:` blocks that configured its other agent backends (`claude:` selects the Claude
Agent SDK harness here and keeps its fields; `openai:` is translated or refused).

What means something here is translated before validation; what does not is left in
place, so validation reports it at its own line with `refused()`'s message instead of
a "did you mean" guess."""

from __future__ import annotations

from typing import Any

from holodeck.spec.compat.controls import CONTROL_KEYS, move_controls
from holodeck.spec.models.settings import Settings

# Fields a config.yaml provider entry lends to the models that name it.
MODEL_DEFAULTS = ("name", "temperature", "max_tokens", "top_p")

_AUTH_INSTEAD: dict[str, tuple[str, str]] = {
    "oauth_token": (
        "a Claude subscription token authenticates the shipped HoloDeck's Claude Agent "
        "SDK backend; models here are called over the Anthropic API",
        "remove it and write `api_key: ${ANTHROPIC_API_KEY}` (or set ANTHROPIC_API_KEY)",
    ),
    "custom": (
        "`custom` sent ANTHROPIC_AUTH_TOKEN to a third-party endpoint",
        "remove it and write `endpoint: <the server's URL>` and `api_key: ${ANTHROPIC_AUTH_TOKEN}`",
    ),
}
# agent.yaml's `model.auth_provider: oauth_token`: the harness keeps the token
_OAUTH_IN_AGENT = (
    "a Claude subscription token authenticates only the Claude Agent SDK harness, which "
    "a `claude:` block selects; without one the model is called over the Anthropic API, "
    "which takes an API key",
    "add `claude: {}` to run the agent in the harness with the token "
    "(CLAUDE_CODE_OAUTH_TOKEN), or remove it and write `api_key: ${ANTHROPIC_API_KEY}`",
)
_CLOUD_AUTH = {
    "bedrock": "AWS Bedrock",
    "vertex": "Google Vertex AI",
    "foundry": "Azure AI Foundry",
}

# claude:/openai: keys with a setting here: key -> (section, field).
BACKEND_MAPPED: dict[str, tuple[str, str]] = {
    "max_turns": ("execution", "max_tool_iterations"),
    "effort": ("model", "reasoning_effort"),
    "max_concurrent_sessions": ("deployment", "max_concurrent_turns"),
}
_TOOLS_AS_DECLARED = "tools run as declared under `tools:`; an MCP server's `tools:` list limits it"
_BACKEND_INSTEAD: dict[str, str] = {
    "web_search": "add a search MCP server under `tools:`, or use an agent image's "
    "`builtins: [web_search]`",
    "bash": "give the agent a function tool or an MCP server under `tools:`",
    "file_system": "add an MCP server such as @modelcontextprotocol/server-filesystem",
    "working_directory": "paths in agent.yaml are relative to its directory",
    "agents": "sub-agents are tools here: `{type: agent, name: ..., path: other/agent.yaml}`",
    "extended_thinking": "write `model.reasoning_effort: low|medium|high`",
    "effort": "the highest here is `model.reasoning_effort: high`",
    "session_memory_estimate_mib": "`deployment.max_concurrent_turns` sets the turns at once",
    "permission_mode": _TOOLS_AS_DECLARED,
    "i_understand_this_is_unsafe": _TOOLS_AS_DECLARED,
    "permissions": _TOOLS_AS_DECLARED,
    "setting_sources": "no Claude Code settings are read here; remove it",
    "disable_default_hooks": "hooks here are the files under `middleware:`",
    "disable_subprocess_env_scrub": "an MCP server gets only the `env:` it is given",
}


# An MCP tool's keys, at the values that would change what the agent does (the values
# that change nothing are taken out with a warning before validation).
MCP_REFUSED: dict[str, tuple[str, str]] = {
    "env_file": (
        "`env_file` loaded a file of variables into the MCP server's environment; here "
        "a server gets only its `env:`",
        "write each variable under `env:` as `NAME: ${NAME}` and put the values in the "
        ".env beside agent.yaml (read for `${VAR}`)",
    ),
    "encoding": (
        "a stdio MCP server speaks UTF-8 here; another `encoding` cannot be honoured",
        "remove it and make the server write UTF-8",
    ),
    "load_tools": (
        "`load_tools: false` offered none of the server's tools; here an MCP tool offers "
        "its server's tools",
        "remove the tool, or list the tools to offer under `tools:`",
    ),
    "is_retrieval": (
        "`is_retrieval: false` kept the server's results out of the RAG metrics' "
        "retrieval context; here every tool's result is in it",
        "remove it; a test case's own `retrieval_context` replaces what the tools returned",
    ),
}


def with_provider_defaults(data: Any, settings: Settings) -> Any:
    """agent.yaml's models with the defaults of the config.yaml entry their `provider`
    names filled in (agent.yaml's own values win): the shipped HoloDeck's documents
    often leave `model.name` to that entry."""
    if not isinstance(data, dict) or not settings.providers:
        return data
    out = dict(data)
    out["model"] = _filled(out.get("model"), settings)
    evaluations = out.get("evaluations")
    if isinstance(evaluations, dict) and "model" in evaluations:
        out["evaluations"] = {**evaluations, "model": _filled(evaluations["model"], settings)}
    tools = out.get("tools")
    if isinstance(tools, list):
        out["tools"] = [_tool_models(t, settings) for t in tools]
    return out


def _tool_models(tool: Any, settings: Settings) -> Any:
    """A prompt tool's `model`, a document tool's `context_model` and `reranker_model`."""
    if not isinstance(tool, dict):
        return tool
    keys = [k for k in ("model", "context_model", "reranker_model") if k in tool]
    return {**tool, **{k: _filled(tool[k], settings) for k in keys}}


def _filled(model: Any, settings: Settings) -> Any:
    if not isinstance(model, dict) or not isinstance(model.get("provider"), str):
        return model
    entry = settings.providers.get(model["provider"])
    if entry is None:
        return model
    defaults = {
        name: getattr(entry, name)
        for name in MODEL_DEFAULTS
        if getattr(entry, name) is not None and name not in model
    }
    return {**model, **defaults}


def translate_backend_blocks(data: Any) -> Any:
    """`claude:` selects the Claude Agent SDK harness (as does `model.backend: claude`),
    which takes the shipped HoloDeck's fields itself; `model.auth_provider` joins it. The
    `openai:` block's settings that mean something here are moved where they live here;
    what is left stays in the block and is refused."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    model = out.get("model")
    if isinstance(model, dict) and model.get("backend") == "claude":
        out["model"] = model = {k: v for k, v in model.items() if k != "backend"}
        out.setdefault("claude", {})
    if isinstance(out.get("claude"), dict):
        out["claude"] = _claude_block(out, dict(out["claude"]))
    block = out.get("openai")
    if isinstance(block, dict):
        left = dict(block)
        move_controls("openai", left, out)
        _move_mapped("openai", left, out)
        if left:
            out["openai"] = left
        else:
            del out["openai"]
    return out


def _claude_block(out: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
    """The harness's own settings stay; `max_concurrent_sessions` is the server's and
    `auth_provider` moves in from `model:`."""
    if "max_concurrent_sessions" in block:
        _move_mapped("claude", block, out, only="max_concurrent_sessions")
    model = out.get("model")
    if isinstance(model, dict) and "auth_provider" in model:
        block.setdefault("auth_provider", model["auth_provider"])
        out["model"] = {k: v for k, v in model.items() if k != "auth_provider"}
    return block


def _move_mapped(
    block_name: str, left: dict[str, Any], out: dict[str, Any], only: str | None = None
) -> None:
    for key, (section, field) in BACKEND_MAPPED.items():
        target = out.get(section, {})
        if key not in left or not isinstance(target, dict) or (only and key != only):
            continue
        if key == "effort" and left[key] not in ("low", "medium", "high"):
            continue  # `max` has no equal here: refused with the block's message
        if field in target:
            raise ValueError(
                f"give `{section}.{field}` or `{block_name}.{key}`, not both "
                f"(`{block_name}.{key}` is `{section}.{field}` here)"
            )
        out[section] = {**target, field: left.pop(key)}


def refused(
    models: set[str], key: str, value: Any, path: tuple[str | int, ...] = ()
) -> tuple[str, str | None] | None:
    """The message for a key the shipped HoloDeck accepts and nothing here acts on, or
    None when `key` is simply unknown. `path`: where it was written."""
    if path == ("model", "auth_provider") and value == "oauth_token":
        return _OAUTH_IN_AGENT  # the agent's own model: a `claude:` block takes the token
    if key == "auth_provider" and models & {"ModelSettings", "ProviderEntry"}:
        return _auth_provider(value)
    if key == "options" and "DatabaseConnection" in models:
        return (
            "`options` passed provider-specific settings to the shipped HoloDeck's store "
            "clients; here each setting a store reads is a field of its own",
            "remove it and write what the store needs as fields: `connection_string` or "
            "`url`, `api_key`, `path` (see docs/search.md#stores)",
        )
    if key in MCP_REFUSED and "McpTool" in models:
        return MCP_REFUSED[key]
    if key == "mcp_servers" and "Settings" in models:
        return (
            "`mcp_servers` in config.yaml gave every agent these MCP servers; here each "
            "agent lists the MCP servers it uses",
            "move each entry into the `tools:` of the agent.yaml that uses it, as "
            "`{type: mcp, name: ..., command: ..., args: [...]}`",
        )
    if key == "openai" and "AgentFile" in models and isinstance(value, dict):
        return _backend_block(key, value)
    return None


def _auth_provider(value: Any) -> tuple[str, str]:
    if not isinstance(value, str):  # never echo a mapping, nor look one up
        value = ""
    if value in _AUTH_INSTEAD:
        return _AUTH_INSTEAD[value]
    if value in _CLOUD_AUTH:
        return (
            f"Claude through {_CLOUD_AUTH[value]} is not a provider here",
            "remove it and use `provider: anthropic` with `api_key`, or a gateway that "
            "speaks the OpenAI API: `provider: openai-compatible` with `endpoint`",
        )
    return (
        f"`auth_provider{': ' + value if value else ''}` is not a setting here; "
        "an API key authenticates",
        "remove it and give `api_key` (or set the provider's key variable)",
    )


def _backend_block(block_name: str, block: dict[str, Any]) -> tuple[str, str]:
    backend = "OpenAI Agents SDK"
    mapped = ", ".join(
        [f"`{k}` (is `{s}.{f}`)" for k, (s, f) in BACKEND_MAPPED.items()]
        + [f"`{k}` (is `{t}`)" for k, t in CONTROL_KEYS.items()]
    )
    problems = "; ".join(
        f"`{key}`: {_BACKEND_INSTEAD.get(key, 'no equivalent; remove it')}" for key in block
    )
    return (
        f"`{block_name}:` configured the shipped HoloDeck's {backend} backend; every "
        f"provider runs in one runtime here. Only {mapped} carry over. {problems}",
        f"remove the keys listed from `{block_name}:`",
    )
