"""Operational settings written the shipped HoloDeck's way (`execution:`, MCP
`request_timeout`): renamed where they mean what a setting here means, a warning where
they only tune something this runtime does not have, refused with what to write where
their loss would change what the agent does. Its `deployment:` keys are in
`compat.deployment`. The renames themselves are part of what the models accept
(`models/older_forms.py`); this module holds the warnings."""

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
