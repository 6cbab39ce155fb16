"""Where an agent's search tools keep their chunks and vectors, for the manifests.

On the pod's own disk (the embedded store, or Chroma or Qdrant in a directory) the data
must outlive the pod, or every start embeds the sources again and pays for it: the
manifests give it a volume. In a shared store (PostgreSQL with pgvector, Redis, a Chroma
or Qdrant server) the pods keep none: the first to start embeds, the others find it done.
"""

from __future__ import annotations

from dataclasses import dataclass

from holodeck.config.settings import settings_and_problems
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.tools import HierarchicalDocumentTool, VectorstoreTool
from holodeck.spec.models.vector_databases import DatabaseConnection

_SERVERS = {"postgres": "PostgreSQL", "redis": "Redis", "chromadb": "Chroma", "qdrant": "Qdrant"}


@dataclass(frozen=True)
class SearchData:
    """The search tools whose data is on the pod's disk, and those in shared stores
    (tool -> the store's name)."""

    local: tuple[str, ...] = ()
    shared: tuple[tuple[str, str], ...] = ()


def search_data(spec: AgentSpec) -> SearchData:
    """Where the search tools of `spec` and its sub-agents keep their data."""
    named = settings_and_problems(spec.root)[0].settings.vectorstores
    local: list[str] = []
    shared: list[tuple[str, str]] = []
    for agent in _agents(spec):
        for tool in agent.tools:
            if not isinstance(tool, VectorstoreTool | HierarchicalDocumentTool):
                continue
            database = tool.database
            if isinstance(database, str):
                database = named.get(database)  # unknown here: taken as on the pod's disk
            store = _server(database)
            if store is None:
                local.append(tool.name)
            else:
                shared.append((tool.name, store))
    return SearchData(tuple(local), tuple(shared))


def _agents(spec: AgentSpec) -> list[AgentSpec]:
    found = [spec]
    for sub in spec.subagents.values():
        found += _agents(sub)
    return found


def _server(database: DatabaseConnection | None) -> str | None:
    """The name of the server `database` is on; None for data in a directory."""
    if database is None or database.provider not in _SERVERS:
        return None
    if database.provider in ("chromadb", "qdrant"):
        addressed = database.url or database.host or database.connection_string
        if addressed is None:
            return None  # in-process, in a directory
    return _SERVERS[database.provider]
