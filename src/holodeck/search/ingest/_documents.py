"""Documents (text, markdown, PDF) to chunks, whole or section by section."""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Sequence

from holodeck.search._types import Chunk
from holodeck.search.ingest._chunking import TOKEN, split
from holodeck.search.ingest._headings import Section
from holodeck.search.ingest._options import IngestOptions

_HEADING_MARKS = frozenset("#=-")


def document_chunks(
    source: str,
    text: str,
    options: IngestOptions,
    sections: Sequence[Section] | None = None,
    page_offsets: Sequence[int] | None = None,
) -> list[Chunk]:
    """Chunk `text` (each section apart when `sections` are given); `page_offsets` (PDF)
    give each chunk the 1-based page it starts on."""
    chunks: list[Chunk] = []
    for section in sections or (Section((), 0, len(text)),):
        body = text[section.start : section.end]
        if section.path and _only_heading(body, section.path[-1]):
            continue  # a heading straight followed by its first subheading
        label = "/".join(section.path)
        for start, end in split(body, options.chunk_size, options.chunk_overlap):
            piece = body[start:end]
            position = len(chunks)
            page = None
            if page_offsets:
                page = bisect_right(page_offsets, section.start + start)
            chunks.append(
                Chunk(
                    id=f"{source}#{label}:{position}" if label else f"{source}#{position}",
                    text=piece,
                    source=source,
                    position=position,
                    content_hash=hashlib.sha256(piece.encode()).hexdigest(),
                    page=page,
                    heading_path=section.path,
                )
            )
    return chunks


def _only_heading(body: str, title: str) -> bool:
    words = [token for token in TOKEN.findall(body) if token not in _HEADING_MARKS]
    return words == [token for token in TOKEN.findall(title) if token not in _HEADING_MARKS]
