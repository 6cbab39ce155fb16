"""Which loop runs an agent: its harness, or HoloDeck's own when the run says
`--harness none` (HOLODECK_HARNESS=none), with a warning naming what is dropped."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from holodeck.errors import DefinitionError
from holodeck.spec.models.agent_spec import AgentSpec

log = logging.getLogger("holodeck.runtime")

HARNESS_ENV = "HOLODECK_HARNESS"
CLAUDE_HARNESSES = frozenset({"claude-sdk", "claude-native"})
DROPPED = "its built-in tools (shell, files, web search, Task sub-agents) and permission modes"


def choose_harness(spec: AgentSpec, model_override: object, env: Mapping[str, str]) -> bool:
    """True when `spec` runs in the Claude harness; False for HoloDeck's own loop.
    Raises `DefinitionError` when the run cannot honour the harness and does not say
    `--harness none`."""
    if spec.harness is None:
        return False
    if env.get(HARNESS_ENV) == "none":
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


def check_harnesses(spec: AgentSpec, model_override: object, env: Mapping[str, str]) -> None:
    """Refuse now, not at the first call, a sub-agent (at any depth) whose harness this
    run cannot honour."""
    for sub in spec.subagents.values():
        if sub.harness is not None and env.get(HARNESS_ENV) != "none":
            choose_harness(sub, model_override, env)
        check_harnesses(sub, model_override, env)


def _claude_model(override: object) -> bool:
    if not isinstance(override, str):
        return False
    provider, _, name = override.partition("/")
    return provider == "anthropic" and name.startswith("claude")
