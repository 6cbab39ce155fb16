"""The spec layer: load agent.yaml files and agent images into one typed `AgentSpec`.

    >>> from holodeck.spec import load_agent, SpecError
    >>> try:
    ...     spec = load_agent("my-agent/agent.yaml")
    ... except SpecError as exc:
    ...     print(exc.render())  # every problem, each with file:line and field

A pure filesystem layer: it imports nothing from the runtime, CLI or server.
"""

from holodeck.spec.agent_spec import AgentSpec, InteractionSpec, SkillSpec
from holodeck.spec.diagnostics import Diagnostic, Severity, SpecError
from holodeck.spec.loader import load_agent

__all__ = [
    "AgentSpec",
    "Diagnostic",
    "InteractionSpec",
    "Severity",
    "SkillSpec",
    "SpecError",
    "load_agent",
]
