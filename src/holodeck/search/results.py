"""What a search returns: one `SearchResult` per matching chunk, best first."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from holodeck.search._types import Chunk


@dataclass(frozen=True)
class SearchResult:
    """A chunk that matched a query.

    `source_reference` names the file and where in it (record id, page, headings);
    `relevance_score` is in [0, 1], higher is better (cosine similarity for semantic
    search); `record` is the whole record a structured chunk came from."""

    matched_content: str
    metadata: dict[str, Any]
    source_reference: str
    relevance_score: float
    record: dict[str, Any] | None = None
    heading_path: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The result as the model (and the test report) sees it."""
        out: dict[str, Any] = {
            "matched_content": self.matched_content,
            "metadata": self.metadata,
            "source_reference": self.source_reference,
            "relevance_score": round(self.relevance_score, 4),
        }
        if self.heading_path:
            out["heading_path"] = list(self.heading_path)
        if self.record is not None:
            out["record"] = self.record
        return out


def source_reference(chunk: Chunk) -> str:
    """`data/products.csv, record 12`, `manual.pdf, page 4`, `guide.md > Install > Linux`."""
    where = chunk.source
    if chunk.record_id is not None:
        where += f", record {chunk.record_id}"
    if chunk.page is not None:
        where += f", page {chunk.page}"
    if chunk.heading_path:
        where += " > " + " > ".join(chunk.heading_path)
    if (chunk.record_id is None and not chunk.heading_path) or (
        chunk.record_id is not None and chunk.position
    ):
        where += f", chunk {chunk.position + 1}"
    return where


def result_of(chunk: Chunk, score: float) -> SearchResult:
    record = json.loads(chunk.record) if chunk.record is not None else None
    return SearchResult(
        matched_content=chunk.text,
        metadata=dict(chunk.metadata),
        source_reference=source_reference(chunk),
        relevance_score=max(0.0, min(1.0, score)),
        record=record,
        heading_path=chunk.heading_path,
    )
