"""Text as the guardrail checks read it, so that look-alike and invisible characters
cannot slip a blocked word past them: compatibility forms folded (NFKC's full-width
letters, ligatures, styled letters), accents and other combining marks dropped, the
common Cyrillic, Greek and Latin look-alikes of Latin letters folded to them, invisible
characters (zero-width spaces and joiners, soft hyphens, controls) dropped, any run of
white space (NBSP, newlines, two spaces) one space, and every digit an ASCII one.

`fold` keeps, for each character of the folded text, the index of the original
character it came from, so a match on the folded text redacts the matching stretch of
the original and leaves the rest of it as it was.

    >>> folded = fold("my pа\\u200bss\\u00a0word")
    >>> folded.text
    'my pass word'
    >>> folded.span(3, 12)
    (3, 13)
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

# Characters that look like a Latin letter and that NFKC leaves alone (it already
# folds full-width and mathematical letters): Cyrillic, Greek, Armenian and a few
# Latin letters of other alphabets. Only close look-alikes, so that words in those
# scripts stay readable to a keyword written in them (keywords are folded alike).
LOOKALIKES = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "һ": "h", "і": "i", "ј": "j", "к": "k", "м": "m",
    "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "ү": "y", "ӏ": "l",
    "А": "A", "В": "B", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M",
    "О": "O", "Р": "P", "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "Ԛ": "Q",
    "Ԝ": "W", "Ү": "Y", "Ӏ": "I",
    # Greek
    "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "ϲ": "c", "ϳ": "j",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
    # Armenian and Latin letters of other alphabets
    "օ": "o", "ս": "u", "ց": "g", "ı": "i", "ȷ": "j", "ɑ": "a", "ɡ": "g", "ɩ": "i", "ʏ": "y",
}  # fmt: skip
# blank letters: they are not format characters, yet show nothing
BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")
DROPPED = frozenset({"Mn", "Me", "Cf", "Cc", "Co", "Cs", "Cn"})


@dataclass(frozen=True)
class Folded:
    """`text` folded from `source`; `origin[i]` is the index in `source` of the
    character `text[i]` came from."""

    source: str
    text: str
    origin: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The stretch of `source` that `text[start:end]` (not empty) came from; marks
        and invisible characters right after its last character go with it."""
        first, last = self.origin[start], self.origin[end - 1] + 1
        while last < len(self.source) and _vanishes(self.source[last]):
            last += 1
        return first, last


def _vanishes(char: str) -> bool:
    """Whether `char` folds to nothing."""
    if char.isspace():
        return False
    pieces = unicodedata.normalize("NFKD", char)
    return all(unicodedata.category(p) in DROPPED or p in BLANK for p in pieces)


def fold(source: str) -> Folded:
    """`source` as the checks read it, with the map back to it."""
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(source):
        if char.isascii() and char.isalnum():  # most of any text: nothing to fold
            out.append(char)
            origin.append(index)
            continue
        for piece in unicodedata.normalize("NFKD", char):
            if piece.isspace():
                if not out or out[-1] != " ":
                    out.append(" ")
                    origin.append(index)
                continue
            category = unicodedata.category(piece)
            if category in DROPPED or piece in BLANK:
                continue
            if category == "Nd":
                piece = str(unicodedata.decimal(piece))
            out.append(LOOKALIKES.get(piece, piece))
            origin.append(index)
    return Folded(source, "".join(out), tuple(origin))


def folded_text(text: str) -> str:
    """Only the folded text (for what the checks look for: keywords)."""
    return fold(text).text.strip()
