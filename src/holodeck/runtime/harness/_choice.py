"""Which loop runs an agent: its harness, or HoloDeck's own when the run's options say
`harness="none"` (`--harness none`, or HOLODECK_HARNESS=none in the environment the run
reads), with a warning naming what is dropped."""

from __future__ import annotations

import logging

from holodeck.errors import DefinitionError
from holodeck.spec.models.agent_spec import AgentSpec

log = logging.getLogger("holodeck.runtime")

CLAUDE_HARNESSES = frozenset({"claude-sdk", "claude-native"})
DROPPED = "its built-in tools (shell, files, web search, Task sub-agents) and permission modes"


def choose_harness(spec: AgentSpec, model_override: object, *, own_loop: bool) -> bool:
    """True when `spec` runs in the Claude harness; False for HoloDeck's own loop.
    `own_loop`: the run says `--harness none`. Raises `DefinitionError` when the run
    cannot honour the harness and does not say `--harness none`."""
    if spec.harness is None:
        return False
    if own_loop:
        log.warning(
            "%s: harness `%s` is not used (--harness none): HoloDeck runs its loop; dropped: %s",
            spec.name,
            spec.harness,
            DROPPED,
        )
        return False
    if spec.harness not in CLAUDE_HARNESSES:
        raise DefinitionError(
            f"{spec.name}: harness `{spec.harness}` runs the agent inside another agent "
            "product, which HoloDeck cannot run; only the Claude Agent SDK harness "
            "(`claude-sdk`) is available. Pass `--harness none` (or set "
            f"HOLODECK_HARNESS=none) to run it in HoloDeck's own loop without {DROPPED}"
        )
    if model_override is not None and not _claude_model(model_override):
        raise DefinitionError(
            f"{spec.name}: runs in the Claude Agent SDK harness, which needs a Claude "
            f"model, not {model_override!r}. Use `--model anthropic/claude-...`, or pass "
            f"`--harness none` to run HoloDeck's own loop without {DROPPED}"
        )
    return True


def check_harnesses(spec: AgentSpec, model_override: object, *, own_loop: bool) -> None:
    """Refuse now, not at the first call, a sub-agent (at any depth) whose harness this
    run cannot honour."""
    if own_loop:
        return
    for sub in spec.subagents.values():
        if sub.harness is not None:
            choose_harness(sub, model_override, own_loop=False)
        check_harnesses(sub, model_override, own_loop=False)


def _claude_model(override: object) -> bool:
    if not isinstance(override, str):
        return False
    provider, _, name = override.partition("/")
    return provider == "anthropic" and name.startswith("claude")
