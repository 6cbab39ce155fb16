"""Ingestion: read a search tool's source (a file or a directory) and cut it into chunks.

- `sources`: which files a source holds, and each file's chunks a batch at a time.
- `mapping`: a structured source's field mapping checked before anything is read.
- `domains` (numbered lines as headings) and `definitions` (defined terms as entries of
  their own) shape documents' chunks.
- internals: files and their paths (`_files`), formats (`_formats`), reading without
  holding (`_reading`), documents (`_documents`), PDF text and its inflation cap (`_pdf`,
  `_pdf_budget`), headings (`_headings`), token chunks (`_chunking`), records from CSV and
  JSON (`_records`, `_json_records`, `_record_batches`, `_record_chunks`, `_samples`,
  `_seen_ids`), and the options every stage receives (`_options`).
"""

from holodeck.search.ingest._formats import decode
from holodeck.search.ingest._options import IngestError, IngestOptions
from holodeck.search.ingest._pdf import read_pdf
from holodeck.search.ingest.mapping import MappingProblem, check_mapping
from holodeck.search.ingest.sources import (
    BATCH,
    chunk_file,
    file_batches,
    ingest,
    rebuild_record,
    source_files,
)

__all__ = [
    "BATCH",
    "IngestError",
    "IngestOptions",
    "MappingProblem",
    "check_mapping",
    "chunk_file",
    "decode",
    "file_batches",
    "ingest",
    "read_pdf",
    "rebuild_record",
    "source_files",
]
