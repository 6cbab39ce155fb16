"""A chunk as one JSON text: how the database stores keep chunks whose metadata their own
fields could not carry exactly (None, lists, ints beside floats)."""

from __future__ import annotations

import json
from typing import Any

from holodeck.search._types import Chunk


def chunk_to_json(chunk: Chunk) -> str:
    """`chunk` as compact JSON; `chunk_from_json` gives back an equal chunk."""
    return json.dumps(
        {
            "id": chunk.id,
            "text": chunk.text,
            "source": chunk.source,
            "position": chunk.position,
            "content_hash": chunk.content_hash,
            "record_id": chunk.record_id,
            "record_index": chunk.record_index,
            "page": chunk.page,
            "heading_path": list(chunk.heading_path),
            "metadata": chunk.metadata,
            "record": chunk.record,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def chunk_from_json(text: str | bytes) -> Chunk:
    data: dict[str, Any] = json.loads(text)
    return Chunk(
        id=data["id"],
        text=data["text"],
        source=data["source"],
        position=data["position"],
        content_hash=data["content_hash"],
        record_id=data["record_id"],
        record_index=data["record_index"],
        page=data["page"],
        heading_path=tuple(data["heading_path"]),
        metadata=data["metadata"],
        record=data["record"],
    )
