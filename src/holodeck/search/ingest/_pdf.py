"""Read a PDF's text page by page, and its outline (bookmarks) when it has one.

Whatever the file holds, reading it raises `ValueError` with a reason (never another
error), inflates its streams to at most `MAX_DECODED` bytes in all, and gives up on an
outline nested too deeply rather than on the file."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from holodeck.search.ingest._pdf_budget import (
    MAX_DECODED,
    InflatesTooMuch,
    decode_within,
    stream_limits,
)

_TOO_DEEP = "its objects are nested too deeply to read"


@dataclass(frozen=True)
class PdfText:
    """The pages' text joined by blank lines, where each page starts, and the outline."""

    text: str
    page_offsets: tuple[int, ...]  # character offset of each page's first character
    outline: tuple[tuple[str, int, int], ...]  # (title, 0-based page, level from 1)
    problem: str | None = None  # what was left out (an outline that cannot be read)


def read_pdf(data: bytes, *, outline: bool = False, max_decoded: int = MAX_DECODED) -> PdfText:
    """Extract a PDF's text, and its outline when `outline` is asked for; raises
    `ValueError` with a readable reason when it cannot."""
    from pypdf import PdfReader

    try:
        with stream_limits(max_decoded):
            reader = PdfReader(io.BytesIO(data))
            encrypted = reader.is_encrypted
            if not encrypted:
                decode_within(reader, max_decoded)
                pages = [page.extract_text() or "" for page in reader.pages]
                headings, problem = _read_outline(reader) if outline else ((), None)
    except InflatesTooMuch as error:
        raise ValueError(str(error)) from None
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    except Exception as error:  # pypdf raises many kinds on a broken file
        raise ValueError(f"pypdf could not read it ({error})") from None
    if encrypted:
        raise ValueError("the PDF is encrypted; save a copy without a password")
    offsets: list[int] = []
    parts: list[str] = []
    length = 0
    for page in pages:
        offsets.append(length)
        parts.append(page)
        length += len(page) + 2
    return PdfText("\n\n".join(parts), tuple(offsets), headings, problem)


def _read_outline(reader: Any) -> tuple[tuple[tuple[str, int, int], ...], str | None]:
    """The outline, or none and why: one nested past pypdf's limits (or broken) costs
    the sections it would give, not the text."""
    try:
        return tuple(_outline(reader, reader.outline, 1)), None
    except Exception as error:  # pypdf's limits and a broken outline alike
        reason = _TOO_DEEP if isinstance(error, RecursionError) else str(error)
        return (), (
            f"its outline (bookmarks) cannot be read ({reason}); "
            "sections come from heading-like lines instead"
        )


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
