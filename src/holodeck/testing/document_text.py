"""Documents given to the model as text: Word, PowerPoint and Excel files (through
markitdown, the `office` extra), chosen PDF pages (pypdf), chosen spreadsheet cells
(openpyxl, which the `office` extra brings).

Each function takes the file's bytes and returns markdown; a problem the case's author
can fix (a missing sheet, a page past the end, the extra not installed) is a
`DocumentError` saying so. The libraries are imported on first use: markitdown takes
seconds to import.
"""

from __future__ import annotations

import functools
import io
import re
import threading
from collections.abc import Sequence
from typing import Any

from holodeck.errors import InputError

OFFICE_EXTRA = "pip install 'holodeck-agents[office]'"
_SUFFIX = {"word": ".docx", "powerpoint": ".pptx", "excel": ".xlsx"}
_SLIDE = re.compile(r"^<!-- Slide number: (\d+) -->$", re.MULTILINE)


class DocumentError(InputError):
    """The document cannot be turned into text as the case asks; the message says why."""


def office_text(data: bytes, kind: str) -> str:
    """A Word, PowerPoint or Excel file as markdown."""
    try:
        from markitdown import StreamInfo
    except ImportError:
        raise DocumentError(
            f"reading {kind} files needs the office extra: {OFFICE_EXTRA}"
        ) from None
    try:
        with _converting:  # one converter, made once: making it loads a file-type model
            result = _converter().convert_stream(
                io.BytesIO(data), stream_info=StreamInfo(extension=_SUFFIX[kind])
            )
    except Exception as exc:  # a damaged or mislabelled file: say so, not the converter's stack
        raise DocumentError(f"not a readable {kind} file ({type(exc).__name__})") from None
    return str(result.markdown).strip()


_converting = threading.Lock()


@functools.cache
def _converter() -> Any:
    from markitdown import MarkItDown

    return MarkItDown(enable_plugins=False)


def slides(markdown: str, pages: Sequence[int]) -> str:
    """The slides numbered `pages` of a presentation converted by `office_text`."""
    marks = list(_SLIDE.finditer(markdown))
    found: dict[int, str] = {}
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(markdown)
        found[int(mark.group(1))] = markdown[mark.start() : end].strip()
    _check_pages(pages, len(found), "slide")
    return "\n\n".join(found[number] for number in pages)


def pdf_pages(data: bytes, pages: Sequence[int]) -> str:
    """The text of the PDF's pages numbered `pages` (from 1), each under its number."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        count = len(reader.pages)
    except (PdfReadError, ValueError, OSError) as exc:
        raise DocumentError(f"not a readable PDF ({exc})") from None
    _check_pages(pages, count, "page")
    return "\n\n".join(
        f"## Page {number}\n\n{(reader.pages[number - 1].extract_text() or '').strip()}"
        for number in pages
    )


def sheet_cells(data: bytes, sheet: str | None, cells: str | None) -> str:
    """One sheet of a workbook (the first when `sheet` is None), or the `cells` range of
    it, as a markdown table of the cells' values."""
    try:
        from openpyxl import load_workbook
    except ImportError:
        raise DocumentError(f"reading excel files needs the office extra: {OFFICE_EXTRA}") from None
    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # not a workbook: openpyxl raises many kinds
        raise DocumentError(f"not a readable excel file ({type(exc).__name__})") from None
    try:
        if sheet is not None and sheet not in book.sheetnames:
            raise DocumentError(
                f"no sheet `{sheet}`; the workbook has: {', '.join(book.sheetnames)}"
            )
        chosen = book[sheet] if sheet is not None else book.worksheets[0]
        if cells is None:
            rows: Any = chosen.iter_rows(values_only=True)
        else:
            try:
                picked = chosen[cells]
            except ValueError as exc:
                raise DocumentError(f"range `{cells}`: {exc}") from None
            if not isinstance(picked, tuple):  # one cell
                picked = ((picked,),)
            elif picked and not isinstance(picked[0], tuple):  # one row or column
                picked = (picked,)
            rows = [[cell.value for cell in row] for row in picked]
        return f"## {chosen.title}{f' {cells}' if cells else ''}\n\n" + _table(list(rows))
    finally:
        book.close()


def _table(rows: list[Sequence[Any]]) -> str:
    if not rows:
        return "(no cells)"
    width = max(len(row) for row in rows)

    def line(row: Sequence[Any]) -> str:
        values = [("" if v is None else str(v)).replace("|", "\\|") for v in row]
        return "| " + " | ".join(values + [""] * (width - len(values))) + " |"

    return "\n".join([line(rows[0]), "|" + " --- |" * width, *map(line, rows[1:])])


def _check_pages(pages: Sequence[int], count: int, what: str) -> None:
    beyond = [n for n in pages if n > count]
    if beyond:
        raise DocumentError(
            f"{what} {beyond[0]} asked for, but the file has {count} {what}"
            f"{'' if count == 1 else 's'}"
        )
