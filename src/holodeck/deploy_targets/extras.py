"""Which of holodeck's extras an agent needs in its image: its session store's client,
its vector databases' clients, the OpenTelemetry exporters when it exports."""

from __future__ import annotations

from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.vector_databases import DatabaseConnection

_STORE_EXTRAS = {"redis": "redis", "postgres": "postgres"}
_VECTOR_EXTRAS = {
    "postgres": "pgvector",
    "redis": "redis",
    "chromadb": "chromadb",
    "qdrant": "qdrant",
}


def needed_extras(spec: AgentSpec) -> list[str]:
    """The extras `spec` (and its sub-agents) needs, sorted; none for the base install."""
    found: set[str] = set()
    _collect(spec, found)
    return sorted(found)


def _collect(spec: AgentSpec, found: set[str]) -> None:
    if spec.memory.store in _STORE_EXTRAS:
        found.add(_STORE_EXTRAS[spec.memory.store])
    if spec.observability is not None and spec.observability.enabled:
        found.add("otel")
    for tool in spec.tools:
        database = getattr(tool, "database", None)
        if isinstance(database, DatabaseConnection) and database.provider in _VECTOR_EXTRAS:
            found.add(_VECTOR_EXTRAS[database.provider])
    for sub in spec.subagents.values():
        _collect(sub, found)
