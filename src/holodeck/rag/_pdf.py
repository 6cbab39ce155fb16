"""Read a PDF's text page by page, and its outline (bookmarks) when it has one."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PdfText:
    """The pages' text joined by blank lines, where each page starts, and the outline."""

    text: str
    page_offsets: tuple[int, ...]  # character offset of each page's first character
    outline: tuple[tuple[str, int, int], ...]  # (title, 0-based page, level from 1)


def read_pdf(data: bytes) -> PdfText:
    """Extract a PDF's text; raises `ValueError` with a readable reason when it cannot."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ValueError("the PDF is encrypted; save a copy without a password")
        pages = [page.extract_text() or "" for page in reader.pages]
        outline = tuple(_outline(reader, reader.outline, 1))
    except (PdfReadError, KeyError, TypeError, AttributeError, OSError) as error:
        raise ValueError(f"pypdf could not read it ({error})") from error
    offsets: list[int] = []
    parts: list[str] = []
    length = 0
    for page in pages:
        offsets.append(length)
        parts.append(page)
        length += len(page) + 2
    return PdfText("\n\n".join(parts), tuple(offsets), outline)


def _outline(reader: Any, items: Any, level: int) -> list[tuple[str, int, int]]:
    """Flatten pypdf's nested outline: a list holds the children of the item before it."""
    found: list[tuple[str, int, int]] = []
    for item in items:
        if isinstance(item, list):
            found.extend(_outline(reader, item, level + 1))
            continue
        page = reader.get_destination_page_number(item)
        title = item.title
        if page is not None and isinstance(title, str):
            found.append((title, page, level))
    return found
