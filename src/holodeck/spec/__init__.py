"""The spec layer: agent.yaml files and agent images read into one typed `AgentSpec`.

    >>> from holodeck import SpecError, load_agent
    >>> try:
    ...     spec = load_agent("no-such-agent/agent.yaml")
    ... except SpecError as exc:
    ...     print(exc.render())  # every problem, each with file:line, field and hint
    no-such-agent/agent.yaml: error: no such file or directory: ... (check the path; ...)

A pure filesystem layer: it imports nothing from the configuration, runtime, CLI or
server; `holodeck.config.loader.load_agent` gives it the environment and settings.
Names are imported on first use, so importing a submodule stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck._lazy_exports import lazy_exports

if TYPE_CHECKING:
    from holodeck.spec.diagnostics import Diagnostic as Diagnostic
    from holodeck.spec.diagnostics import Severity as Severity
    from holodeck.spec.diagnostics import SpecError as SpecError
    from holodeck.spec.models.agent_spec import AgentSpec as AgentSpec
    from holodeck.spec.models.agent_spec import InteractionSpec as InteractionSpec
    from holodeck.spec.models.agent_spec import SkillSpec as SkillSpec

_EXPORTS = {
    "AgentSpec": "holodeck.spec.models.agent_spec",
    "InteractionSpec": "holodeck.spec.models.agent_spec",
    "SkillSpec": "holodeck.spec.models.agent_spec",
    "Diagnostic": "holodeck.spec.diagnostics",
    "Severity": "holodeck.spec.diagnostics",
    "SpecError": "holodeck.spec.diagnostics",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)
