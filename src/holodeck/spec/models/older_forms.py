"""Older spellings the models take and turn into theirs before validating: the shipped
HoloDeck's names for settings that mean the same here (renamed), values that say what
happens here anyway (dropped), and values whose loss would change what the agent does
(refused, saying what to write). They are part of what each model accepts, so they live
beside the models; `spec/compat/` holds the document-level side of the same forms (the
warnings at their lines, the provider defaults, the backend blocks) and imports these."""

from __future__ import annotations

from typing import Any

# The shipped HoloDeck's `protocol` values: each names what is served here anyway
# (REST at /v1/chat, AG-UI at /awp; MCP and A2A beside them), so each is accepted.
SERVED_PROTOCOLS = ("rest", "ag-ui", "both")
_SERVED = (
    "`holodeck deploy` serves every agent over REST (`POST /v1/chat`, OpenAI's "
    "`POST /v1/chat/completions`), AG-UI (`POST /awp`), MCP (`/mcp`) and A2A at once"
)


def renamed(data: Any, old: str, new: str, where: str) -> Any:
    """`data` with `old` written as `new`; both at once is an error (which one wins is
    not obvious to whoever wrote them)."""
    if not isinstance(data, dict) or old not in data:
        return data
    if new in data:
        raise ValueError(f"give `{new}` or `{old}` ({where}), not both")
    out = {k: v for k, v in data.items() if k != old}
    out[new] = data[old]
    return out


def translate_execution(data: Any) -> Any:
    """`llm_timeout` (the shipped HoloDeck's name) is `model_timeout` here;
    `cache_directory` is `cache_dir`."""
    data = renamed(data, "cache_directory", "cache_dir", "both name the download cache")
    return renamed(data, "llm_timeout", "model_timeout", "both limit one model request")


def translate_mcp(data: Any) -> Any:
    """The shipped HoloDeck's MCP `request_timeout` is the per-call `timeout` here. Its
    `timeout` meant connecting to an HTTP server, so the two together are refused."""
    if isinstance(data, dict) and "request_timeout" in data and "timeout" in data:
        raise ValueError(
            "give `timeout` (seconds per tool call) without `request_timeout`: here "
            "`timeout` is what `request_timeout` was; to wait longer for the server to "
            "start or connect, write `startup_timeout`"
        )
    return renamed(data, "request_timeout", "timeout", "")


def refuse_container_deployment(data: Any) -> Any:
    """`protocol: rest`, `ag-ui` or `both` says what happens here anyway, and the keys of
    `NO_EFFECT` do nothing: they are dropped. Another protocol, or a health check path
    other than the server's `/health`, is refused."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    if data.get("protocol") in SERVED_PROTOCOLS:
        del data["protocol"]
    if data.get("runtime") == "container":
        del data["runtime"]
    registry = data.get("registry")
    if isinstance(registry, dict) and "credentials_env_prefix" in registry:
        data["registry"] = {k: v for k, v in registry.items() if k != "credentials_env_prefix"}
    if data.get("health_check_path") == "/health":
        del data["health_check_path"]
    problems = []
    if "protocol" in data:
        shown = data["protocol"] if isinstance(data["protocol"], str) else "that value"
        problems.append(
            f"`protocol: {shown}` is not a protocol the shipped HoloDeck knew (`rest`, "
            f"`ag-ui` or `both`); {_SERVED}: remove it"
        )
    if "health_check_path" in data:
        problems.append(
            "`health_check_path`: the server answers its health check at `/health` (and "
            "readiness at `/ready`), which the image's HEALTHCHECK and the manifests' probes "
            "use; remove it (or write `health_check_path: /health`)"
        )
    if "runtime" in data:
        problems.append("`runtime`: `container` is the only runtime; remove it")
    if problems:
        raise ValueError(". ".join(problems))
    return data


def drop_auth_provider(data: Any) -> Any:
    """`auth_provider: api_key` says what happens here anyway (the key authenticates), so
    it is dropped; any other value stays, to be refused at its line."""
    if isinstance(data, dict) and data.get("auth_provider") == "api_key":
        return {k: v for k, v in data.items() if k != "auth_provider"}
    return data
