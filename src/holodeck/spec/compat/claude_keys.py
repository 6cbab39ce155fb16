"""Keys of the shipped HoloDeck's `claude:` block that only tuned how its server sized or
guarded the Claude Agent SDK backend: here they have no effect, so each is a warning saying
why (an error with `--strict`), not an "unknown field"."""

from __future__ import annotations

# model name -> {key: why it has no effect here, with what to do}
CLAUDE_NO_EFFECT: dict[str, dict[str, str]] = {
    "ClaudeSettings": {
        "session_memory_estimate_mib": "`session_memory_estimate_mib` sized the shipped "
        "HoloDeck's server from its memory limit; here `deployment.max_concurrent_turns` "
        "sets the turns one process runs at once (default 64); remove it",
    },
    "BashSettings": {
        "allow_unsafe": "`allow_unsafe` has no effect here: the harness's shell runs what "
        "`bash.enabled` allows, less `excluded_commands`, and `permission_mode` decides "
        "what runs without a check; remove it",
    },
}


def claude_no_effect(models: set[str], key: str) -> str | None:
    """Why `key` of a `claude:` settings model in `models` has no effect here, or None."""
    for model in models & CLAUDE_NO_EFFECT.keys():
        why = CLAUDE_NO_EFFECT[model].get(key)
        if why is not None:
            return why
    return None
