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


def drop_ignored(data: Any, doc: YamlDocument, collector: Collector, *, strict: bool) -> Any:
    """`data` without the keys of `IGNORED`, each reported at its line."""
    if not isinstance(data, dict) or not IGNORED.keys() & data.keys():
        return data
    for key in IGNORED.keys() & data.keys():
        why, fix = IGNORED[key]
        collector.add(
            doc.diagnostic(
                (key,),
                why if strict else f"ignored: {why}",
                hint=fix,
                severity=Severity.ERROR if strict else Severity.WARNING,
            )
        )
    return {k: v for k, v in data.items() if k not in IGNORED}
