"""Operational settings written the shipped HoloDeck's way (`execution:`, MCP
`request_timeout`): renamed where they mean what a setting here means, a warning where
they only tune something this runtime does not have, refused with what to write where
their loss would change what the agent does. Its `deployment:` keys are in
`compat.deployment`."""

from __future__ import annotations

from typing import Any

from holodeck.spec.compat.claude_keys import claude_no_effect
from holodeck.spec.diagnostics import Collector, Severity
from holodeck.spec.yaml.document import YamlDocument

# The shipped HoloDeck's `execution:` keys that only tune output this runtime does not
# have: accepted with a warning that says why they have no effect (errors with --strict).
# (`file_timeout`, `download_timeout`, `cache_enabled`, `cache_dir` and `verbose` work.)
EXECUTION_NO_EFFECT: dict[str, str] = {
    "quiet": "`quiet` has no effect here: `holodeck test` has no quiet mode (it prints one "
    "line per case and a summary; `-o report.json` writes the results to a file); remove it",
}


def no_effect(models: set[str], key: str) -> str | None:
    """Why `key` has no effect here, when it is a tuning key of a model in `models`."""
    if "ExecutionSettings" in models:
        return EXECUTION_NO_EFFECT.get(key)
    return claude_no_effect(models, key)


def without_no_effect(data: Any, doc: YamlDocument, collector: Collector) -> Any:
    """A config.yaml's data without `execution:` keys that have no effect here, each a
    warning (the agent's loader makes them errors under --strict)."""
    block = data.get("execution") if isinstance(data, dict) else None
    if not isinstance(block, dict):
        return data
    found = [key for key in block if key in EXECUTION_NO_EFFECT]
    for key in found:
        message = f"ignored: {EXECUTION_NO_EFFECT[key]}"
        collector.add(doc.diagnostic(("execution", key), message, severity=Severity.WARNING))
    if not found:
        return data
    return {**data, "execution": {k: v for k, v in block.items() if k not in found}}


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
