"""Where chunks and their vectors live: embedded on disk, or a vector database.

async with open_store(StoreLocation("embedded", Path(".holodeck/vectors")), "docs", 384) as s:
    await s.replace_file(file, chunks, vectors)
"""

from holodeck.search._types import Chunk, Scored, SourceFile
from holodeck.search.stores._factory import open_store
from holodeck.search.stores._protocol import (
    DroppableStore,
    StoreLocation,
    StoreProvider,
    VectorStore,
)

# what a store keeps and returns, for callers outside search/ (long-term memory)
__all__ = [
    "Chunk",
    "DroppableStore",
    "Scored",
    "SourceFile",
    "StoreLocation",
    "StoreProvider",
    "VectorStore",
    "open_store",
]
