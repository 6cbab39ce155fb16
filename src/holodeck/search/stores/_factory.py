"""`open_store`: the store a location names. Server clients are imported only when their
store is opened, so an extra not installed costs nothing until it is needed."""

from __future__ import annotations

from holodeck.errors import ConfigurationError
from holodeck.search.stores._chroma import ChromaStore
from holodeck.search.stores._embedded import EmbeddedStore
from holodeck.search.stores._postgres import PostgresStore
from holodeck.search.stores._protocol import StoreLocation, VectorStore
from holodeck.search.stores._qdrant import QdrantStore
from holodeck.search.stores._redis import RedisStore


def open_store(location: StoreLocation, collection: str, dimensions: int | None) -> VectorStore:
    """The collection `collection` in the store at `location`, to open with `async with`.

    `dimensions` is the width of the embedding model's vectors, or None for a collection
    searched by keywords only.

        async with open_store(StoreLocation("embedded", path), "docs", 384) as store:
            hits = await store.nearest(vector, k=5)
    """
    if dimensions is not None and dimensions <= 0:
        raise ConfigurationError(f"vector dimensions must be positive, not {dimensions}")
    provider = location.provider
    if provider == "embedded":
        return EmbeddedStore(location.path, collection, dimensions)
    if provider == "postgres":
        return PostgresStore(_url(location), collection, dimensions)
    if provider == "redis":
        return RedisStore(_url(location), collection, dimensions)
    if provider == "chromadb":
        return ChromaStore(location, collection, dimensions)
    if provider == "qdrant":
        return QdrantStore(location, collection, dimensions)
    raise ConfigurationError(
        f"unknown vector store provider {provider!r}",
        hint="use one of: embedded, postgres, redis, chromadb, qdrant",
    )


def _url(location: StoreLocation) -> str:
    if not location.url:
        raise ConfigurationError(
            f"the {location.provider} vector store needs a url",
            hint=f"give the {location.provider} store's connection url",
        )
    return location.url
