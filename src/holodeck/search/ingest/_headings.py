"""Find the headings of a markdown text or of a PDF's pages, as sections of the text.

A section runs from its heading to the next heading and knows the headings enclosing it
(`("Guide", "Install", "Linux")`), so its chunks can say where in the document they lie.

    >>> text = "# Guide\\n\\nIntro.\\n\\n## Install\\n\\nRun it.\\n"
    >>> [(s.path, text[s.start:s.end].strip()) for s in markdown_sections(text)]
    [(('Guide',), '# Guide\\n\\nIntro.'), (('Guide', 'Install'), '## Install\\n\\nRun it.')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# "2.1 Title": short numbers (not a year), then a capitalised title
_NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3})*)\.?[ \t]+([^\W\d_].*)$")
_MAX_HEADING_CHARS = 80
_MAX_HEADING_WORDS = 12


@dataclass(frozen=True)
class Heading:
    """A heading found at character `offset` of the text, `level` 1 the outermost."""

    offset: int
    level: int
    title: str


@dataclass(frozen=True)
class Section:
    """Characters `[start, end)` of the text under the headings `path`."""

    path: tuple[str, ...]
    start: int
    end: int


def markdown_sections(text: str) -> list[Section]:
    """The sections of a markdown text, by ATX (`## Title`) and Setext headings."""
    return sections(text, markdown_headings(text))


def sections(text: str, headings: Iterable[Heading]) -> list[Section]:
    """Cut `text` at each heading; text before the first heading has an empty path."""
    found: list[Section] = []
    stack: list[Heading] = []
    start = 0
    path: tuple[str, ...] = ()
    for heading in sorted(headings, key=lambda item: item.offset):
        if heading.offset > start:
            found.append(Section(path, start, heading.offset))
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        path = tuple(item.title for item in stack)
        start = heading.offset
    found.append(Section(path, start, len(text)))
    return found


def markdown_headings(text: str) -> list[Heading]:
    """ATX and Setext headings, skipping fenced code and a leading YAML front matter."""
    headings: list[Heading] = []
    fence = ""
    previous: tuple[int, str] | None = None  # the last paragraph line: (offset, text)
    lines = text.splitlines(keepends=True)
    index = _front_matter_end(lines)
    offset = sum(len(line) for line in lines[:index])
    for line in lines[index:]:
        content = line.rstrip("\r\n")
        opened = _FENCE.match(content)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            previous = None
        elif opened:
            fence, previous = opened.group(1), None
        elif atx := _ATX.match(content):
            headings.append(Heading(offset, len(atx.group(1)), (atx.group(2) or "").strip()))
            previous = None
        elif previous is not None and _SETEXT.match(content):
            level = 1 if content.strip()[0] == "=" else 2
            headings.append(Heading(previous[0], level, previous[1].strip()))
            previous = None
        elif content.strip():
            previous = (offset, content)
        else:
            previous = None
        offset += len(line)
    return [heading for heading in headings if heading.title]


def _front_matter_end(lines: Sequence[str]) -> int:
    """Index of the first line after a `---` ... `---` YAML front matter (0 when none)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return index + 1
    return 0


def outline_headings(
    text: str, page_offsets: Sequence[int], entries: Iterable[tuple[str, int, int]]
) -> list[Heading]:
    """Place PDF outline entries `(title, page index, level)` in the text of the pages.

    An entry starts where its title appears on its page (after the previous entry), or
    at the top of its page when the extracted text does not show the title."""
    headings: list[Heading] = []
    cursor = 0
    for title, page, level in entries:
        if not title.strip() or not 0 <= page < len(page_offsets):
            continue
        page_start = page_offsets[page]
        page_end = page_offsets[page + 1] if page + 1 < len(page_offsets) else len(text)
        pattern = r"\s+".join(re.escape(word) for word in title.split())
        found = re.compile(pattern, re.IGNORECASE).search(text, max(page_start, cursor), page_end)
        offset = found.start() if found else page_start
        cursor = max(cursor, offset)
        headings.append(Heading(offset, level, " ".join(title.split())))
    return headings


def line_headings(text: str) -> list[Heading]:
    """Lines that look like headings: short, and numbered (`2.1 Title`) or in capitals."""
    headings: list[Heading] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        level = _heading_level(stripped)
        if level:
            headings.append(Heading(offset + line.index(stripped[0]), level, stripped))
        offset += len(line)
    return headings


def _heading_level(line: str) -> int:
    if not line or len(line) > _MAX_HEADING_CHARS or len(line.split()) > _MAX_HEADING_WORDS:
        return 0
    numbered = _NUMBERED.match(line)
    if numbered and numbered.group(2)[0].isupper() and not line.endswith((".", ",", ";", ":")):
        return numbered.group(1).count(".") + 1
    letters = [char for char in line if char.isalpha()]
    if len(letters) >= 3 and all(char.isupper() for char in letters):
        return 1
    return 0
