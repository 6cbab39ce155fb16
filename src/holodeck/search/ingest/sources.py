"""Ingestion: read a tool's source (a file or a directory) and cut it into chunks.

Documents (.txt, .md, .pdf) are chunked by tokens on paragraph and sentence boundaries,
optionally section by section (`structure="headings"`); structured files (.csv, .json,
.jsonl) give one text per record from its vector fields, with the other fields as
metadata. Files without a known extension are recognised by their content.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "data").mkdir()
    >>> _ = (root / "data/faq.md").write_text("# FAQ\\n\\nReset it from the login page.")
    >>> _ = (root / "data/products.csv").write_text("name,price\\nKettle,12\\n")
    >>> ingested = ingest(IngestOptions(source=root / "data", root=root))
    >>> for chunk in ingested.chunks:
    ...     print(chunk.id, repr(chunk.text), chunk.metadata)
    data/faq.md#0 '# FAQ\\n\\nReset it from the login page.' {}
    data/products.csv#0:0 'Kettle' {'price': 12}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from holodeck.search._types import Chunk, Ingested, IngestIssue, SourceFile
from holodeck.search.ingest._documents import document_chunks
from holodeck.search.ingest._files import relative, resolve, walk
from holodeck.search.ingest._formats import SUPPORTED, Format, decode, too_deep
from holodeck.search.ingest._headings import (
    line_headings,
    markdown_headings,
    markdown_sections,
    outline_headings,
    sections,
)
from holodeck.search.ingest._options import IngestError, IngestOptions
from holodeck.search.ingest._pdf import read_pdf
from holodeck.search.ingest._reading import digest, file_format
from holodeck.search.ingest._record_batches import Batch, csv_batches, json_chunks, jsonl_batches
from holodeck.search.ingest.definitions import definition_chunks
from holodeck.search.ingest.domains import domain_headings

__all__ = [
    "BATCH",
    "IngestError",
    "IngestOptions",
    "chunk_file",
    "file_batches",
    "ingest",
    "rebuild_record",
    "source_files",
]

BATCH = 1024  # chunks a file gives at a time: what is read, embedded and stored at once
MAX_ISSUES = 1000  # problems listed per file; the others are counted


def source_files(options: IngestOptions) -> list[SourceFile]:
    """The files of the source, sorted, each with the sha256 of its bytes.

    A directory is walked recursively; hidden files and directories and files of no
    supported kind (binary data other than PDF) are skipped. Files are hashed a block at
    a time, never read whole."""
    source = resolve(options.source, options.root)
    shown = relative(source, options.root)
    if not source.exists():
        raise IngestError(
            f"vectorstore source {shown!r} does not exist",
            hint=f"create it, or fix `source` (a file or directory relative to {options.root})",
        )
    if source.is_file():
        if _format(source, shown) is None:
            raise IngestError(
                f"vectorstore source {shown!r} is binary data, not a file ingestion can read",
                hint=f"point `source` at {SUPPORTED} files",
            )
        return [SourceFile(shown, _digest(source, shown))]
    found: list[SourceFile] = []
    for path in walk(source):
        name = relative(path, options.root)
        if _format(path, name) is not None:
            found.append(SourceFile(name, _digest(path, name)))
    if not found:
        raise IngestError(
            f"vectorstore source {shown + '/'!r} holds no supported file",
            hint=f"add {SUPPORTED} files to it (hidden files are skipped), or fix `source`",
        )
    return sorted(found, key=lambda file: file.path)


def file_batches(file: SourceFile, options: IngestOptions, size: int = BATCH) -> Iterator[Batch]:
    """One source file's chunks, about `size` at a time (CSV and JSON lines files are
    read as they go), each batch with the problems met reading it: a bad record, an
    unreadable page, a file that cannot be read at all. Never raises for the file's
    content: whatever it holds is that file's issue."""
    options.check_sizes()
    told = more = 0
    try:
        for chunks, issues in _batches(file.path, options.root / file.path, options, size):
            kept = issues[: max(0, MAX_ISSUES - told)]
            told += len(kept)
            more += len(issues) - len(kept)
            yield chunks, kept
    except OSError as error:
        yield [], [IngestIssue(file.path, f"cannot read {file.path}: {error.strerror or error}")]
    except RecursionError:  # a JSON record that parsed, yet is too deep to flatten or copy
        yield [], [IngestIssue(file.path, f"{file.path} is not ingested: {too_deep()}")]
    if more:
        yield [], [IngestIssue(file.path, f"{more} more problems in {file.path} are not listed")]


def chunk_file(file: SourceFile, options: IngestOptions) -> tuple[list[Chunk], list[IngestIssue]]:
    """Parse one source file and cut it into chunks; problems that spare the rest of the
    file (a bad record, an unreadable page) come back as issues."""
    chunks: list[Chunk] = []
    issues: list[IngestIssue] = []
    for found, problems in file_batches(file, options):
        chunks.extend(found)
        issues.extend(problems)
    return chunks, issues


def ingest(options: IngestOptions, on_file: Callable[[SourceFile], None] | None = None) -> Ingested:
    """Every file of the source, chunked; `on_file` is called before each file is read."""
    options.check_sizes()
    files = source_files(options)
    chunks: list[Chunk] = []
    issues: list[IngestIssue] = []
    for file in files:
        if on_file is not None:
            on_file(file)
        found, problems = chunk_file(file, options)
        chunks.extend(found)
        issues.extend(problems)
    return Ingested(files=files, chunks=chunks, issues=issues)


def rebuild_record(chunk: Chunk) -> dict[str, Any] | None:
    """The whole record a structured chunk came from, as the file holds it; None for a
    document's chunk."""
    if chunk.record is None:
        return None
    value = json.loads(chunk.record)
    return value if isinstance(value, dict) else None


def _format(path: Path, shown: str) -> Format | None:
    try:
        return file_format(path)
    except OSError as error:
        raise _unreadable(shown, error) from error


def _digest(path: Path, shown: str) -> str:
    try:
        return digest(path)
    except OSError as error:
        raise _unreadable(shown, error) from error


def _unreadable(shown: str, error: OSError) -> IngestError:
    return IngestError(
        f"cannot read vectorstore source {shown!r}: {error.strerror or error}",
        hint="check the file's permissions",
    )


def _batches(source: str, path: Path, options: IngestOptions, size: int) -> Iterator[Batch]:
    kind = file_format(path)
    if kind is None:
        yield [], [IngestIssue(source, f"{source} is binary data, not {SUPPORTED}")]
    elif kind == "csv":
        yield from csv_batches(source, path, options, size)
    elif kind == "jsonl":
        yield from jsonl_batches(source, path, options, size)
    else:  # documents and JSON are read whole; their chunks still leave a batch at a time
        data = path.read_bytes()
        chunks, issues = (
            _pdf_chunks(source, data, options)
            if kind == "pdf"
            else _text_chunks(source, kind, data, options)
        )
        del data
        for start in range(0, max(len(chunks), 1), size):
            yield chunks[start : start + size], issues if start == 0 else []


def _text_chunks(source: str, kind: Format, data: bytes, options: IngestOptions) -> Batch:
    text, replaced = decode(data)
    issues: list[IngestIssue] = []
    if replaced:
        issues.append(IngestIssue(source, "not valid UTF-8: unreadable bytes were replaced"))
    if kind == "json":
        chunks, problems = json_chunks(source, text, options)
        return chunks, issues + problems
    headings = kind == "markdown" and options.structure == "headings"
    parts = markdown_sections(text) if headings else None
    if options.domain != "none" and options.structure == "headings":
        found = markdown_headings(text) if kind == "markdown" else []
        parts = sections(
            text, [*found, *domain_headings(text, options.domain, options.domain_depth)]
        )
    chunks = document_chunks(source, text, options, parts)
    if not chunks:
        issues.append(IngestIssue(source, f"{source} holds no text"))
    elif options.definitions:
        chunks += definition_chunks(source, text, len(chunks), parts)
    return chunks, issues


def _pdf_chunks(source: str, data: bytes, options: IngestOptions) -> Batch:
    headings = options.structure == "headings"
    try:
        pdf = read_pdf(data, outline=headings)
    except ValueError as error:
        return [], [IngestIssue(source, f"cannot read the PDF {source}: {error}")]
    issues = [IngestIssue(source, pdf.problem)] if pdf.problem else []
    parts = None
    if headings:
        if pdf.outline:
            found = outline_headings(pdf.text, pdf.page_offsets, pdf.outline)
        else:
            found = line_headings(pdf.text)
        found += domain_headings(pdf.text, options.domain, options.domain_depth)
        parts = sections(pdf.text, found)
    chunks = document_chunks(source, pdf.text, options, parts, pdf.page_offsets)
    if not chunks:
        issues.append(IngestIssue(source, f"{source} has no text to extract (scanned images?)"))
    elif options.definitions:
        chunks += definition_chunks(source, pdf.text, len(chunks), parts)
    return chunks, issues
