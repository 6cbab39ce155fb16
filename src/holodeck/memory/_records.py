"""A memory as the search stores keep it: one chunk in a collection of its own user's,
its id the chunk's source and record, when and in which session it was made in its
metadata."""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass
from typing import Any

from holodeck.search.stores import Chunk, SourceFile


@dataclass(frozen=True)
class Memory:
    """One fact kept for a user (or for the agent, or one session of a user)."""

    id: str
    text: str
    created_at: float  # seconds since the epoch
    session: str | None = None  # set for memories kept to one session

    @classmethod
    def new(cls, text: str, session: str | None = None) -> Memory:
        return cls(uuid.uuid4().hex[:16], text, time.time(), session)

    def as_chunk(self) -> Chunk:
        return Chunk(
            id=self.id,
            text=self.text,
            source=self.id,
            position=0,
            content_hash=content_hash(self.text),
            record_id=self.id,
            metadata={"created_at": self.created_at, "session": self.session},
        )

    def as_file(self) -> SourceFile:
        return SourceFile(self.id, content_hash(self.text))

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "created_at": self.created_at,
            "session": self.session,
        }


def from_chunk(chunk: Chunk) -> Memory:
    created = chunk.metadata.get("created_at")
    session = chunk.metadata.get("session")
    return Memory(
        chunk.source,
        chunk.text,
        float(created) if isinstance(created, int | float) else 0.0,
        session if isinstance(session, str) else None,
    )


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def normalised(text: str) -> str:
    """`text` as compared for duplicates: case and spacing folded."""
    return " ".join(text.casefold().split()).rstrip(".")
