"""The session store an agent's `memory:` block names. Agents naming the same store
share one connection; their sessions are kept apart by the agent's name in the key."""

from __future__ import annotations

from pathlib import Path

from holodeck.sessions import (
    MemorySessionStore,
    PostgresSessionStore,
    RedisSessionStore,
    SessionStore,
    SqliteSessionStore,
)
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.settings import MemorySettings

StoreIdentity = tuple[str, str, float | None]  # kind, where, time to live


def store_identity(memory: MemorySettings, spec: AgentSpec, state_dir: Path) -> StoreIdentity:
    """Two agents with the same identity share a store."""
    url = memory.url.get_secret_value() if memory.url is not None else None
    ttl = float(memory.ttl_seconds) if memory.ttl_seconds is not None else None
    if memory.store == "sqlite":
        path = spec.resolve(url) if url else (state_dir / "sessions.db").resolve()
        return ("sqlite", str(path), ttl)
    if memory.store == "memory":
        return ("memory", "", ttl)
    assert url is not None  # the schema requires a url for redis and postgres
    return (memory.store, url, ttl)


def open_store(identity: StoreIdentity) -> SessionStore:
    kind, where, ttl = identity
    if kind == "sqlite":
        return SqliteSessionStore(Path(where), ttl_s=ttl)
    if kind == "redis":
        return RedisSessionStore(where, ttl_s=ttl)
    if kind == "postgres":
        return PostgresSessionStore(where, ttl_s=ttl)

    return MemorySessionStore(ttl_s=ttl)
