"""What ingestion reads and how it cuts it: the options every stage receives."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from holodeck.errors import DefinitionError


class IngestError(DefinitionError):
    """A source cannot be ingested at all (missing, empty, or cut with impossible sizes)."""


@dataclass(frozen=True)
class IngestOptions:
    """Where a tool's data lies and how its files and records become chunks.

    Structured options (`vector_fields` ... `meta_prefix`) apply to CSV and JSON sources;
    `record_path`, `meta` and the prefixes follow `pandas.json_normalize`. Without
    `record_path` (where pandas ignores them) `meta` names fields of the records that are
    kept as metadata and never embedded, and `record_prefix` still prefixes the fields.
    Fields named in `meta` are always kept as metadata, whatever `meta_fields` says.
    A relative `source` is taken from `root`.

        >>> IngestOptions(source=Path("/a/data"), root=Path("/a"), chunk_size=10).chunk_overlap
        64
    """

    source: Path  # absolute file or directory
    root: Path  # agent directory: chunk sources are relative to it
    vector_fields: tuple[str, ...] | None = None  # None: every text field
    meta_fields: tuple[str, ...] | None = None  # None: every field not embedded
    id_field: str | None = None  # None: the record's 0-based index
    field_separator: str = "\n"
    record_path: str | None = None  # JSON: dotted path to the records list
    meta: tuple[str, ...] | None = None  # JSON: dotted fields outside record_path
    record_prefix: str | None = None
    meta_prefix: str | None = None
    chunk_size: int = 512  # tokens
    chunk_overlap: int = 64  # tokens, < chunk_size
    structure: Literal["plain", "headings"] = "plain"
    domain: str = "none"  # numbered lines that act as headings (`rag.domains`)
    domain_depth: int | None = None  # only the outermost that many kinds of them
    definitions: bool = False  # each definition also an entry of its own (`rag.definitions`)

    def check_sizes(self) -> None:
        """Raise `IngestError` when the chunk sizes cannot cut anything."""
        if self.chunk_size < 1:
            raise IngestError(
                f"chunk_size is {self.chunk_size}: a chunk needs at least one token",
                hint="set chunk_size to a positive number of tokens (default 512)",
            )
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise IngestError(
                f"chunk_overlap is {self.chunk_overlap} with chunk_size {self.chunk_size}: "
                "the overlap must be at least 0 and smaller than the chunk",
                hint="set chunk_overlap below chunk_size (e.g. an eighth of it)",
            )
