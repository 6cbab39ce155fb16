"""Numbered lines that act as headings in some kinds of documents (`document_domain`).

Legislation, contracts, papers and manuals mark their parts with numbering rather than
markdown headings: `SEC. 3. DEFINITIONS.`, `(a) In general`, `Article IV`, `Step 2`,
`1.1 Scope`. For a domain, each such line starts a section, nested by the numbering's
level, so chunks follow the document's parts and carry them in their heading path.

    >>> text = "SEC. 2. PURPOSE.\\nWhy.\\n(a) IN GENERAL.—Text.\\n"
    >>> [(h.level, h.title) for h in domain_headings(text, "us_legislative")]
    [(3, 'SEC. 2. PURPOSE.'), (4, '(a) IN GENERAL.—Text.')]
"""

from __future__ import annotations

import re

from holodeck.search.ingest._headings import Heading

_I = re.IGNORECASE
_ROMAN = r"[IVXLCDM]+"

# Per domain, outermost first: (level, pattern of a line that opens such a part).
# Levels leave room for markdown headings above the numbered parts where documents
# have both (a `# Title` over `SEC. 3`).
DOMAINS: dict[str, tuple[tuple[int, re.Pattern[str]], ...]] = {
    "us_legislative": (
        (1, re.compile(rf"^TITLE\s+(?:{_ROMAN}|\d+)\b", _I)),
        (2, re.compile(r"^(?:CHAPTER|SUBTITLE)\s+\w+\b", _I)),
        (3, re.compile(r"^SEC(?:TION|\.)?\s*\d+[A-Z]?\.")),
        (4, re.compile(r"^\([a-z]{1,2}\)\s")),
        (5, re.compile(r"^\(\d+\)\s")),
        (6, re.compile(r"^\([A-Z]\)\s")),
    ),
    "au_legislative": (
        (1, re.compile(r"^Part\s+\d+[A-Z]?\b", _I)),
        (2, re.compile(r"^Division\s+\d+[A-Z]?\b", _I)),
        (3, re.compile(r"^\d+[A-Z]?\s+[A-Z][^.]{0,80}$")),
        (4, re.compile(r"^\(\d+[A-Z]?\)\s")),
        (5, re.compile(r"^\([a-z]{1,2}\)\s")),
        (6, re.compile(r"^\((?:i{1,3}|iv|v|vi{0,3}|ix|x)\)\s")),
    ),
    "academic": (
        (3, re.compile(r"^\d{1,2}\.?\s+[A-Z]")),
        (4, re.compile(r"^\d{1,2}\.\d{1,2}\.?\s+[A-Z]")),
        (5, re.compile(r"^\d{1,2}\.\d{1,2}\.\d{1,2}\.?\s+[A-Z]")),
    ),
    "technical": (
        (3, re.compile(r"^Step\s+\d+\b", _I)),
        (4, re.compile(r"^\d{1,2}\.\d{1,2}\.?\s+[A-Z]")),
        (4, re.compile(r"^(?:Note|Warning|Caution)\s*:", _I)),
    ),
    "legal_contract": (
        (3, re.compile(rf"^Article\s+(?:{_ROMAN}|\d+)\b", _I)),
        (4, re.compile(r"^Section\s+\d+(?:\.\d+)*\b", _I)),
        (5, re.compile(r"^\([a-z]{1,2}\)\s")),
        (6, re.compile(r"^\(\d+\)\s")),
    ),
}
_TITLE_CHARS = 60


def domain_headings(text: str, domain: str, depth: int | None = None) -> list[Heading]:
    """Lines of `text` that open a part in `domain`'s numbering; `depth` keeps only the
    outermost that many kinds of part. Lines inside fenced code are not headings."""
    patterns = DOMAINS.get(domain, ())[:depth]
    if not patterns:
        return []
    found: list[Heading] = []
    offset = 0
    fenced = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and stripped:
            # a later, deeper pattern may match too (`(1)` under us_legislative): the first wins
            level = next((lvl for lvl, p in patterns if p.match(stripped)), 0)
            if level:
                found.append(Heading(offset + line.index(stripped[0]), level, _title(stripped)))
        offset += len(line)
    return found


def _title(line: str) -> str:
    if len(line) <= _TITLE_CHARS:
        return line
    cut = line[:_TITLE_CHARS].rsplit(" ", 1)[0]
    return cut + " ..."
