"""OpenTelemetry traces, metrics and logs of HoloDeck runs (the `observability:` block).

    >>> from holodeck.observability import telemetry_for
    >>> from holodeck.spec.models.agent_spec import AgentSpec
    >>> from pathlib import Path
    >>> telemetry_for(AgentSpec(format="agent.yaml", root=Path("."), source=Path("a"), name="a"))
    >>> # None: observability is off, and no OpenTelemetry SDK module was imported

Spans follow the GenAI semantic conventions: pydantic-ai's instrumentation makes the
`invoke_agent`, `chat <model>` and `execute_tool <name>` spans; HoloDeck adds test case
and metric spans, tool failures, metrics derived from spans, log export, and the span
trees `holodeck chat --trace` and `holodeck test -v` print.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from holodeck._lazy_exports import lazy_exports
from holodeck.errors import ConfigurationError
from holodeck.observability._exporters import missing_exporters
from holodeck.observability._telemetry import Telemetry as Telemetry
from holodeck.observability._telemetry import shared_telemetry
from holodeck.observability._tree import render as render
from holodeck.spec.models.observability_settings import ObservabilitySettings

if TYPE_CHECKING:
    from holodeck.observability._telemetry import hold_shared as hold_shared
    from holodeck.observability._telemetry import release_shared as release_shared
    from holodeck.observability._telemetry import shutdown_shared as shutdown_shared
    from holodeck.observability._tree import SpanNode as SpanNode
    from holodeck.spec.models.agent_spec import AgentSpec
    from holodeck.spec.models.observability_settings import ObservabilitySettings

_EXPORTS = {
    "hold_shared": "holodeck.observability._telemetry",
    "release_shared": "holodeck.observability._telemetry",
    "shutdown_shared": "holodeck.observability._telemetry",
    "SpanNode": "holodeck.observability._tree",
}

__all__ = [
    "Telemetry",
    "render",
    "service_name",
    "telemetry_for",
    "traced_in_terminal",
    "tree_printer",
]
__all__ += sorted(_EXPORTS)  # the names imported when first used

__getattr__ = lazy_exports(__name__, _EXPORTS)


def telemetry_for(spec: AgentSpec, env: Mapping[str, str] | None = None) -> Telemetry | None:
    """The shared `Telemetry` of the agent's `observability:` block, or None when it is
    off (nothing of the OpenTelemetry SDK is imported then). OTEL_SDK_DISABLED=true
    turns it off too."""
    settings = spec.observability
    env = os.environ if env is None else env
    if settings is None or not settings.enabled:
        return None
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    missing = missing_exporters(settings, env)
    if missing:
        raise ConfigurationError(
            f"{spec.source}: `observability` exports to {' and '.join(missing)}, whose "
            "exporter is not installed",
            hint="pip install 'holodeck-agents[otel]', or turn that exporter off (the "
            "console exporter and --trace need nothing more)",
        )
    return shared_telemetry(settings, service_name(spec.name, settings, env), env)


def service_name(agent: str, settings: ObservabilitySettings, env: Mapping[str, str]) -> str:
    """`service_name`, else OTEL_SERVICE_NAME, else holodeck-<agent name>."""
    return settings.service_name or env.get("OTEL_SERVICE_NAME") or f"holodeck-{agent}"


def traced_in_terminal(spec: AgentSpec, env: Mapping[str, str] | None = None) -> Telemetry:
    """The agent's telemetry, or, with observability off, tracing kept in memory with no
    exporter (for `--trace`: span trees without a collector)."""
    found = telemetry_for(spec, env)
    if found is not None:
        return found

    settings = ObservabilitySettings(enabled=True)
    name = service_name(spec.name, settings, os.environ if env is None else env)
    return Telemetry(settings, name, exporting=False)


def tree_printer(write: Callable[[str], None]) -> Callable[[list[SpanNode]], None]:
    """A `Telemetry.watch_traces` callback writing each trace as an indented tree."""

    def show(roots: list[SpanNode]) -> None:
        write("\n".join(render(roots)))

    return show
