"""Source files for the ingestion tests: real PDFs written byte by byte, and options."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from holodeck.search.ingest import IngestOptions


def options(root: Path, source: str, **fields: Any) -> IngestOptions:
    """Options for `root/source`, the agent directory being `root`."""
    return IngestOptions(source=root / source, root=root, **fields)


def make_pdf(pages: Sequence[Sequence[str]]) -> bytes:
    """A PDF whose pages show the given lines in Helvetica (text pypdf can extract)."""
    page_ids = [4 + 2 * index for index in range(len(pages))]
    kids = " ".join(f"{number} 0 R" for number in page_ids)
    objects = {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>",
        3: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    for number, lines in zip(page_ids, pages, strict=True):
        shown = " ".join(f"({_escape(line)}) Tj T*" for line in lines)
        stream = f"BT /F1 11 Tf 14 TL 72 740 Td {shown} ET"
        objects[number] = (
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {number + 1} 0 R >>"
        )
        objects[number + 1] = f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream"
    out = bytearray(b"%PDF-1.4\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n{objects[number]}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for number in sorted(objects):
        out += f"{offsets[number]:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


def with_outline(pdf: bytes, entries: Sequence[tuple[str, int, int]]) -> bytes:
    """The PDF with bookmarks `(title, 0-based page, level)` added by pypdf."""
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=io.BytesIO(pdf))
    parents: dict[int, Any] = {}
    for title, page, level in entries:
        parents[level] = writer.add_outline_item(
            title=title, page_number=page, parent=parents.get(level - 1)
        )
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
