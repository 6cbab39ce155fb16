"""The spec layer: load agent.yaml files and agent images into one typed `AgentSpec`.

    >>> from holodeck.spec import load_agent, SpecError
    >>> try:
    ...     spec = load_agent("my-agent/agent.yaml")
    ... except SpecError as exc:
    ...     print(exc.render())  # every problem, each with file:line and field

A pure filesystem layer: it imports nothing from the runtime, CLI or server.
Names are imported on first use, so importing a submodule stays cheap and the
config layer can use `holodeck.spec.diagnostics` without a cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from holodeck.spec.agent_spec import AgentSpec as AgentSpec
    from holodeck.spec.agent_spec import InteractionSpec as InteractionSpec
    from holodeck.spec.agent_spec import SkillSpec as SkillSpec
    from holodeck.spec.diagnostics import Diagnostic as Diagnostic
    from holodeck.spec.diagnostics import Severity as Severity
    from holodeck.spec.diagnostics import SpecError as SpecError
    from holodeck.spec.loader import load_agent as load_agent

_EXPORTS = {
    "AgentSpec": "holodeck.spec.agent_spec",
    "InteractionSpec": "holodeck.spec.agent_spec",
    "SkillSpec": "holodeck.spec.agent_spec",
    "Diagnostic": "holodeck.spec.diagnostics",
    "Severity": "holodeck.spec.diagnostics",
    "SpecError": "holodeck.spec.diagnostics",
    "load_agent": "holodeck.spec.loader",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'holodeck.spec' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
