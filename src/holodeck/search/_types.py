"""The values that pass between the stages of retrieval."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

JsonScalar = str | int | float | bool | None

SearchMode = Literal["semantic", "keyword", "hybrid"]


@dataclass(frozen=True)
class Chunk:
    """One searchable piece of a source: a stretch of a document or of a record.

    `id` is stable across runs (`<source>#<record or section>:<position>`), so an unchanged
    source maps to the same ids; `content_hash` is the hash of `text` (what is embedded)."""

    id: str
    text: str
    source: str  # file path relative to the agent's directory, with `/` separators
    position: int  # 0-based index of the chunk within its record (or its file)
    content_hash: str
    record_id: str | None = None  # structured data: the record's id (id_field or row index)
    record_index: int | None = None  # structured data: 0-based index of the record
    page: int | None = None  # PDF: 1-based page where the chunk starts
    heading_path: tuple[str, ...] = ()  # structure-aware documents: enclosing headings
    metadata: dict[str, JsonScalar | list[JsonScalar]] = field(default_factory=dict)
    record: str | None = None  # structured data: the whole record as JSON, to rebuild it


@dataclass(frozen=True)
class SourceFile:
    """A file the ingestion read, with the hash of its bytes (for incremental runs)."""

    path: str  # relative to the agent's directory, `/` separators
    content_hash: str


@dataclass(frozen=True)
class Scored:
    """A chunk with the score one search method gave it (higher is better)."""

    chunk: Chunk
    score: float


@dataclass(frozen=True)
class IngestIssue:
    """A problem in one record or file that did not stop the ingestion."""

    source: str
    message: str
    record_index: int | None = None

    @property
    def where(self) -> str:
        """The source, and the record when the problem is in one: `data.csv, record 3`."""
        return self.source + (
            f", record {self.record_index}" if self.record_index is not None else ""
        )


@dataclass(frozen=True)
class Ingested:
    """Everything read from a tool's source: its files, chunks and the problems met."""

    files: Sequence[SourceFile]
    chunks: Sequence[Chunk]
    issues: Sequence[IngestIssue] = ()
