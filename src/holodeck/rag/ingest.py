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

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from holodeck.rag._documents import document_chunks
from holodeck.rag._files import relative, resolve, walk
from holodeck.rag._formats import STRUCTURED, SUPPORTED, Format, decode, detect_format, too_deep
from holodeck.rag._headings import line_headings, markdown_sections, outline_headings, sections
from holodeck.rag._json_records import BAD_LINE, normalize
from holodeck.rag._options import IngestError, IngestOptions
from holodeck.rag._pdf import read_pdf
from holodeck.rag._record_chunks import record_chunks
from holodeck.rag._records import RecordSet, read_csv
from holodeck.rag._types import Chunk, Ingested, IngestIssue, SourceFile

__all__ = [
    "IngestError",
    "IngestOptions",
    "chunk_file",
    "ingest",
    "rebuild_record",
    "source_files",
]


def source_files(options: IngestOptions) -> list[SourceFile]:
    """The files of the source, sorted, each with the sha256 of its bytes.

    A directory is walked recursively; hidden files and directories and files of no
    supported kind (binary data other than PDF) are skipped."""
    source = resolve(options.source, options.root)
    shown = relative(source, options.root)
    if not source.exists():
        raise IngestError(
            f"vectorstore source {shown!r} does not exist",
            hint=f"create it, or fix `source` (a file or directory relative to {options.root})",
        )
    if source.is_file():
        data = _read(source, shown)
        if detect_format(source.name, data) is None:
            raise IngestError(
                f"vectorstore source {shown!r} is binary data, not a file ingestion can read",
                hint=f"point `source` at {SUPPORTED} files",
            )
        return [SourceFile(shown, hashlib.sha256(data).hexdigest())]
    found: list[SourceFile] = []
    for path in walk(source):
        data = _read(path, relative(path, options.root))
        if detect_format(path.name, data) is not None:
            found.append(SourceFile(relative(path, options.root), hashlib.sha256(data).hexdigest()))
    if not found:
        raise IngestError(
            f"vectorstore source {shown + '/'!r} holds no supported file",
            hint=f"add {SUPPORTED} files to it (hidden files are skipped), or fix `source`",
        )
    return sorted(found, key=lambda file: file.path)


def chunk_file(file: SourceFile, options: IngestOptions) -> tuple[list[Chunk], list[IngestIssue]]:
    """Parse one source file and cut it into chunks; problems that spare the rest of the
    file (a bad record, an unreadable page) come back as issues."""
    options.check_sizes()
    path = options.root / file.path
    try:
        data = path.read_bytes()
    except OSError as error:
        return [], [IngestIssue(file.path, f"cannot read {file.path}: {error.strerror or error}")]
    kind = detect_format(path.name, data)
    if kind is None:
        return [], [IngestIssue(file.path, f"{file.path} is binary data, not {SUPPORTED}")]
    if kind == "pdf":
        return _pdf_chunks(file.path, data, options)
    try:
        return _text_chunks(file.path, kind, data, options)
    except RecursionError:  # a JSON record that parsed, yet is too deep to flatten or copy
        return [], [IngestIssue(file.path, f"{file.path} is not ingested: {too_deep()}")]


def _text_chunks(
    source: str, kind: Format, data: bytes, options: IngestOptions
) -> tuple[list[Chunk], list[IngestIssue]]:
    text, replaced = decode(data)
    issues: list[IngestIssue] = []
    if replaced:
        issues.append(IngestIssue(source, "not valid UTF-8: unreadable bytes were replaced"))
    if kind in STRUCTURED:
        found = _records(kind, text, options)
        chunks, problems = record_chunks(source, found, options)
        return chunks, issues + problems
    headings = kind == "markdown" and options.structure == "headings"
    parts = markdown_sections(text) if headings else None
    chunks = document_chunks(source, text, options, parts)
    if not chunks:
        issues.append(IngestIssue(source, f"{source} holds no text"))
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


def _read(path: Path, shown: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise IngestError(
            f"cannot read vectorstore source {shown!r}: {error.strerror or error}",
            hint="check the file's permissions",
        ) from error


def _records(kind: Format, text: str, options: IngestOptions) -> RecordSet:
    if kind == "csv":
        found = read_csv(text)
        found.meta_names = tuple(options.meta or ())
        return found
    if kind == "jsonl":
        items: list[Any] = []
        problems: list[tuple[int | None, str]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(_load_json(line))
            except ValueError as error:
                index = len(items) if options.record_path is None else None
                problems.append((index, f"line {number} is not valid JSON: {_reason(error)}"))
                items.append(BAD_LINE)
        found = _normalize(items, options)
        found.problems[:0] = problems
        return found
    try:
        data = _load_json(text)
    except ValueError as error:
        return RecordSet(problems=[(None, f"not valid JSON: {_reason(error)}")])
    return _normalize(data, options)


def _load_json(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError(too_deep()) from None


def _normalize(data: Any, options: IngestOptions) -> RecordSet:
    return normalize(
        data, options.record_path, options.meta, options.record_prefix, options.meta_prefix
    )


def _pdf_chunks(
    source: str, data: bytes, options: IngestOptions
) -> tuple[list[Chunk], list[IngestIssue]]:
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
        parts = sections(pdf.text, found)
    chunks = document_chunks(source, pdf.text, options, parts, pdf.page_offsets)
    if not chunks:
        issues.append(IngestIssue(source, f"{source} has no text to extract (scanned images?)"))
    return chunks, issues


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _reason(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno}, column {error.colno}"
    return str(error)
