"""Operational settings written the shipped HoloDeck's way (`execution:`, MCP
`request_timeout`): renamed where they mean what a setting here means, refused with
what to write where nothing here acts on them. Its `deployment:` keys are in
`compat.deployment`."""

from __future__ import annotations

from typing import Any

# The shipped HoloDeck's `execution:` keys that nothing here acts on, with what to do.
EXECUTION_REFUSED: dict[str, tuple[str, str]] = {
    "file_timeout": (
        "`file_timeout` limits converting and downloading test case files, and nothing "
        "here does either: a test case's `files:` are local paths sent to the model as "
        "they are",
        "remove it; to limit a model request write `model_timeout`",
    ),
    "download_timeout": (
        "`download_timeout` limits downloading test case files from URLs, and nothing "
        "here downloads them: `files:` entries are local paths",
        "remove it; download the file beside agent.yaml and give its `path`",
    ),
    "cache_enabled": (
        "`cache_enabled` caches converted test case files, and nothing here converts them",
        "remove it; to replay model exchanges offline use `replay: <cassette>`",
    ),
    "cache_dir": (
        "`cache_dir` is where converted test case files were cached; nothing here converts them",
        "remove it; to record model exchanges use `record: <cassette>`",
    ),
    "verbose": (
        "`verbose` is a command-line choice here",
        "remove it and run `holodeck test -v`",
    ),
    "quiet": (
        "`quiet` is a command-line choice here",
        "remove it; `holodeck test` prints one line per case unless given -v",
    ),
}


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
    """`llm_timeout` (the shipped HoloDeck's name) is `model_timeout` here."""
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
