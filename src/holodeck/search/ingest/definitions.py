"""Definitions as entries of their own (`extract_definitions`).

Legislation and contracts define their terms in long sections (`"Covered system" means
...`). Each definition found is also stored as a short entry of its own, headed
`Definition of "<term>"` and carrying the section's heading path, so a question about a
term finds its definition rather than the whole section it sits in.

    >>> text = 'Definitions.\\n\\n(1) The term "agency" means an executive agency.\\n'
    >>> [c.text for c in definition_chunks("act.md", text, 0)]
    ['Definition of "agency": (1) The term "agency" means an executive agency.']
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from holodeck.search._types import Chunk
from holodeck.search.ingest._headings import Section

# `"Term" means ...`, `The term ‘Term’ means ...`, `"Term" shall mean`, `has the meaning`
_DEFINED = re.compile(
    r"[\"“‘']([^\"”’'\n]{1,80})[\"”’']\s*(?:,\s*)?(?:means|shall mean|has the meaning|refers to)\b"
)
# a line opening another item of a list of definitions: `(2) ...`, `3. ...`, `- ...`
_NEXT_ITEM = re.compile(r"\n[ \t]*(?:\(\w{1,4}\)|\d{1,3}\.|[-*])[ \t]")
MAX_CHARS = 1200  # of a definition's paragraph kept in its entry


def definition_chunks(
    source: str, text: str, position: int, sections: Sequence[Section] | None = None
) -> list[Chunk]:
    """An entry per definition in `text`, numbered from `position` in the file."""
    chunks: list[Chunk] = []
    seen: set[str] = set()
    for match in _DEFINED.finditer(text):
        term = " ".join(match.group(1).split())
        if not term or term.casefold() in seen:
            continue
        seen.add(term.casefold())
        start = text.rfind("\n", 0, match.start()) + 1  # the line that defines it
        end = text.find("\n\n", match.end())
        end = len(text) if end == -1 else end
        item = _NEXT_ITEM.search(text, match.end(), end)  # the next numbered definition
        paragraph = " ".join(text[start : item.start() if item else end].split())
        body = f'Definition of "{term}": {paragraph[:MAX_CHARS]}'
        number = position + len(chunks)
        chunks.append(
            Chunk(
                id=f"{source}#definition:{number}",
                text=body,
                source=source,
                position=number,
                content_hash=hashlib.sha256(body.encode()).hexdigest(),
                heading_path=_path_at(sections, match.start()),
                metadata={"defined_term": term},
            )
        )
    return chunks


def _path_at(sections: Sequence[Section] | None, offset: int) -> tuple[str, ...]:
    for section in sections or ():
        if section.start <= offset < section.end:
            return section.path
    return ()
