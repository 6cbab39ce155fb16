"""Where memories live: the store `memory.long_term.database` names, and the collection
of each user in it (one collection per agent, user and embedding model, so that one
user's search never ranks another's memories)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from holodeck.errors import ConfigurationError
from holodeck.search.stores import StoreLocation
from holodeck.spec.models.long_term_memory import LongTermMemory
from holodeck.spec.models.settings import Settings
from holodeck.spec.models.vector_databases import DatabaseConnection

DATA_DIR = Path(".holodeck")


def memory_location(memory: LongTermMemory, root: Path, settings: Settings) -> StoreLocation:
    """The store of `memory`: config.yaml's `vectorstores` entry it names, its own
    connection, or the embedded store under `root/.holodeck/memory/`."""
    embedded = root / DATA_DIR / "memory"
    database = memory.database
    if isinstance(database, str):
        found = settings.vectorstores.get(database)
        if found is None:
            known = ", ".join(sorted(settings.vectorstores)) or "none"
            raise ConfigurationError(
                f"memory.long_term.database names {database!r}, which config.yaml "
                f"`vectorstores:` does not hold (it holds: {known})",
                hint="add it under `vectorstores:` in config.yaml, or give the connection "
                "inline: `database: {provider: postgres, connection_string: ...}`",
            )
        database = found
    if database is None:
        return StoreLocation("embedded", embedded)
    return _location(database, root, embedded)


def _location(db: DatabaseConnection, root: Path, embedded: Path) -> StoreLocation:
    secret = db.connection_string.get_secret_value() if db.connection_string else None
    path = (root / db.path) if db.path else None
    options = {"api_key": db.api_key.get_secret_value()} if db.api_key else {}
    if db.provider in ("postgres", "redis"):
        return StoreLocation(db.provider, embedded, url=secret, options=options)
    url = db.url or secret
    if url is None and db.host is not None:
        url = f"http://{db.host}:{db.port or 8000}"
    return StoreLocation(db.provider, path or embedded, url=url, options=options)


def collection_of(agent: str, user: str, producer: str | None) -> str:
    """The collection holding `agent`'s memories of `user`, made by `producer`'s vectors
    (None: words only). Readable where the stores allow, unique by its digest."""
    digest = hashlib.sha256(f"{agent}\x1f{user}\x1f{producer}".encode()).hexdigest()[:16]
    return f"mem_{digest}"
