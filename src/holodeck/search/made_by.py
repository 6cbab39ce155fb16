"""Which embedding model and endpoint made a search tool's vectors, remembered beside the
project's vector data, so that a change of producer is said in one line.

The collections themselves are named by what made their vectors (`SearchIndex`), so a
new producer never reads or mixes another's vectors; this record only tells the user.

    record = MadeBy(project / ".holodeck/vectors/made_by.json")
    before = record.get("docs_1a2b3c")           # None the first time
    record.set("docs_1a2b3c", "openai:text-embedding-3-small at https://... (1536 dimensions)")
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from holodeck.atomic_write import write_atomically


class MadeBy:
    """A JSON object in `path`: a tool's collection family -> the producer that filled it.

    A file that is missing or unreadable is an empty record: it only ever holds what can
    be learnt again at the next ingestion."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def get(self, family: str) -> str | None:
        value = self._read().get(family)
        return value if isinstance(value, str) else None

    def set(self, family: str, producer: str) -> None:
        record = self._read()
        if record.get(family) == producer:
            return
        record[family] = producer
        # a read-only data directory: the next change goes unannounced, no more
        with contextlib.suppress(OSError):
            write_atomically(self.path, json.dumps(record, indent=1, sort_keys=True).encode())

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}
