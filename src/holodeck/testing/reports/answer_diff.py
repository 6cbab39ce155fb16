"""A failing answer beside the text it was expected to be: both cut to a few lines, and a
word diff that keeps a few words around each change and stops after a few changes.

    >>> segments = word_diff("Order 42 has shipped.", "Order 42 is late.")
    >>> plain(segments)
    'Order 42 [-has shipped-]{+is late+}.'

The markers are git's word-diff ones, so the diff reads without colour too; the console
colours them when it writes to a terminal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

# Enough of an answer to recognise it; `-v` shows it whole.
SHOWN_CHARS = 300
SHOWN_LINES = 4
CONTEXT_WORDS = 3  # unchanged words kept on each side of a change
SHOWN_CHANGES = 5
CHANGE_WORDS = 12  # of one change's words; the rest are counted

Kind = Literal["same", "removed", "added", "gap", "note"]


@dataclass(frozen=True)
class Segment:
    kind: Kind
    text: str
    spaced: bool = True  # whitespace came before it in its text


# A word, or a run of punctuation, with whether whitespace came before it: `9,` is `9`
# then `,`, so that a comma does not make a changed word.
_TOKEN = re.compile(r"(\s*)(\w+|[^\w\s]+)")
Token = tuple[bool, str]


def cut(text: str, what: str = "answer") -> tuple[str, str | None]:
    """`text` cut to a few lines, and a note of what was cut (None when nothing was)."""
    whole = text.strip()
    kept = "\n".join(whole.splitlines()[:SHOWN_LINES])
    if len(kept) > SHOWN_CHARS:
        kept = kept[:SHOWN_CHARS]
        if " " in kept:  # at the end of a word
            kept = kept.rsplit(" ", 1)[0]
    if len(kept) >= len(whole):
        return whole, None
    left = len(whole) - len(kept)
    return kept + " …", f"({left:,} more characters cut; -v shows the whole {what})"


def word_diff(expected: str, answer: str) -> list[Segment]:
    """What changes `expected` into `answer`, word by word; long unchanged stretches are
    a gap, and after SHOWN_CHANGES changes a note says how many more there were."""
    old, new = tokens(expected), tokens(answer)
    opcodes = SequenceMatcher(None, [t for _, t in old], [t for _, t in new], False)
    codes = opcodes.get_opcodes()
    segments: list[Segment] = []
    changes = sum(tag != "equal" for tag, *_ in codes)
    shown = 0
    for index, (tag, i1, i2, j1, j2) in enumerate(codes):
        if tag == "equal":
            segments += _unchanged(old[i1:i2], first=index == 0, last=index == len(codes) - 1)
            continue
        if shown == SHOWN_CHANGES:
            more = changes - shown
            segments.append(Segment("note", f"… and {more} more change{'s' if more != 1 else ''}"))
            break
        shown += 1
        if i2 > i1:
            segments.append(_segment("removed", _few(old[i1:i2])))
        if j2 > j1:
            segments.append(_segment("added", _few(new[j1:j2])))
    return segments


def tokens(text: str) -> list[Token]:
    return [(bool(m.group(1)), m.group(2)) for m in _TOKEN.finditer(text)]


def in_common(expected: str, answer: str) -> bool:
    """Whether the two texts share a word: a diff of texts that do not only repeats them."""
    words = {t for _, t in tokens(expected) if t[0].isalnum() or t[0] == "_"}
    return any(t in words for _, t in tokens(answer))


def marked(segment: Segment) -> str:
    """A segment as plain text: `[-removed-]`, `{+added+}`, the others as they are."""
    if segment.kind == "removed":
        return f"[-{segment.text}-]"
    if segment.kind == "added":
        return f"{{+{segment.text}+}}"
    return segment.text


def spaced(segments: list[Segment]) -> list[tuple[str, Segment]]:
    """Each segment with what goes before it: a space, except first and between the
    words removed and the words put in their place."""
    out: list[tuple[str, Segment]] = []
    for index, segment in enumerate(segments):
        replacing = segment.kind == "added" and index and segments[index - 1].kind == "removed"
        joined = index == 0 or replacing or not segment.spaced
        out.append(("" if joined else " ", segment))
    return out


def plain(segments: list[Segment]) -> str:
    """The diff as one line of text, with git's word-diff markers."""
    return "".join(space + marked(segment) for space, segment in spaced(segments))


def _text(part: list[Token]) -> str:
    return "".join((" " if spaced and n else "") + t for n, (spaced, t) in enumerate(part))


def _segment(kind: Kind, part: list[Token]) -> Segment:
    return Segment(kind, _text(part), part[0][0] if part else True)


def _few(part: list[Token]) -> list[Token]:
    if len(part) <= CHANGE_WORDS:
        return part
    return [*part[:CHANGE_WORDS], (True, f"… ({len(part) - CHANGE_WORDS:,} more words)")]


def _unchanged(part: list[Token], *, first: bool, last: bool) -> list[Segment]:
    """Unchanged words between changes: all of them when few, else those next to the
    changes with a gap between."""
    before = [] if first else part[:CONTEXT_WORDS]  # after the previous change
    after = [] if last else part[-CONTEXT_WORDS:]  # before the next change
    if len(part) <= len(before) + len(after) + 1:
        return [_segment("same", part)]
    out = [_segment("same", before)] if before else []
    out.append(Segment("gap", "…"))
    if after:
        out.append(_segment("same", after))
    return out
