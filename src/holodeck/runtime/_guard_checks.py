"""What a guardrail's text checks find: regular expressions, whole keywords, personal
data (emails, phone numbers, card numbers that pass the Luhn check) and length. Each
finder returns the spans of the original text it matched with the placeholder that
redacts them; `redact` replaces them. Pure functions, no model: they run on every
message, off the event loop (`_guardrails.py`).

Keywords and personal data are looked for in the text as `_guard_text.fold` reads it
(look-alike letters, invisible characters, accents and spacing folded), patterns in both
the text as written and as folded; each match is mapped back to the stretch of the
original it came from, so a redaction keeps the rest of the original as it was."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from holodeck.runtime._guard_patterns import TooSlow, pattern_spans
from holodeck.runtime._guard_text import Folded, fold, folded_text
from holodeck.spec.models.guardrails import GuardrailCheck

log = logging.getLogger("holodeck.runtime")

# the lookbehind starts a try only where a run of address characters starts: without
# it a long run with no `@` is scanned again from each of its characters
EMAIL = re.compile(r"(?<![\w.%+-])[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}")
# 13 to 19 digits, in groups split by a space, dash, dot, slash or `x` (a space may
# stand either side of the mark); the text is folded, so NBSP is a space and
# zero-width characters are gone
CARD = re.compile(r"(?<![\d-])\d(?:(?: ?[-./xX] ?| )?\d){12,18}(?!\d)")
# an optional +country code, an optional (area code), then digit groups split by
# spaces, dots or dashes; 9 to 15 digits in all (shorter runs are dates, amounts, ids)
PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,5}(?:[ .-]?\d{2,5}){1,4}(?!\w)"
)
PHONE_DIGITS = range(9, 16)
PLACEHOLDER = {"email": "[email]", "phone": "[phone]", "card": "[card]"}
REDACTED = "[redacted]"


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    placeholder: str


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn checksum (card numbers do)."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def find_pii(text: str, kinds: Sequence[str]) -> list[Found]:
    """Emails, card numbers (Luhn-valid, 13-19 digits) and phone numbers in `text`; a
    span taken by one kind is not taken again by the next (cards before phones)."""
    folded = _folded(text)
    seen = folded.text
    found: list[tuple[int, int, str]] = []
    if "email" in kinds:
        found += [(m.start(), m.end(), PLACEHOLDER["email"]) for m in EMAIL.finditer(seen)]
    if "card" in kinds:
        for match in CARD.finditer(seen):
            digits = re.sub(r"\D", "", match.group())
            if 13 <= len(digits) <= 19 and luhn_valid(digits):
                found.append((match.start(), match.end(), PLACEHOLDER["card"]))
    if "phone" in kinds:
        for match in PHONE.finditer(seen):
            count = sum(c.isdigit() for c in match.group())
            overlaps = any(start < match.end() and match.start() < end for start, end, _ in found)
            if count in PHONE_DIGITS and not overlaps:
                found.append((match.start(), match.end(), PLACEHOLDER["phone"]))
    return _disjoint([_back(folded, start, end, placeholder) for start, end, placeholder in found])


def find_patterns(text: str, patterns: Sequence[str]) -> list[Found]:
    """What `patterns` match in the text as written and as folded. Patterns that take
    longer than their time bound count as matching the whole text: a guardrail fails
    closed, so a slow pattern blocks (or redacts all) rather than let the text by."""
    folded = _folded(text)
    try:
        as_written, as_folded = pattern_spans(patterns, [text, folded.text])
    except TooSlow as slow:
        log.warning(
            "guardrail pattern %s on a text of %d characters, so the text counts as "
            "matched; rewrite the pattern (`holodeck validate` names risky ones)",
            slow,
            len(text),
        )
        return [Found(0, len(text), REDACTED)]
    found = [Found(start, end, REDACTED) for start, end in as_written]
    found += [_back(folded, start, end, REDACTED) for start, end in as_folded]
    return _disjoint(found)


def find_keywords(text: str, keywords: Sequence[str]) -> list[Found]:
    """Each keyword (or phrase) as a whole word, whatever its case, in the folded text
    (the keyword folded alike)."""
    folded = _folded(text)
    found = []
    for keyword in keywords:
        wanted = folded_text(keyword)
        if not wanted:
            continue
        pattern = rf"(?<!\w){re.escape(wanted)}(?!\w)"
        found += [
            _back(folded, m.start(), m.end(), REDACTED)
            for m in re.finditer(pattern, folded.text, re.I)
        ]
    return _disjoint(found)


def find(check: GuardrailCheck, text: str) -> list[Found]:
    """What `check` matches in `text` (a text check: not `judge`). A text over
    `max_length` is one match spanning it all."""
    if check.pii is not None:
        return find_pii(text, check.pii)
    if check.block_patterns is not None:
        return find_patterns(text, check.block_patterns)
    if check.block_keywords is not None:
        return find_keywords(text, check.block_keywords)
    if check.max_length is not None and len(text) > check.max_length:
        return [Found(0, len(text), "")]
    return []


def redact(text: str, found: Sequence[Found]) -> str:
    """`text` with each span replaced by its placeholder."""
    pieces, at = [], 0
    for item in sorted(found, key=lambda f: f.start):
        pieces += [text[at : item.start], item.placeholder]
        at = item.end
    return "".join(pieces) + text[at:]


@lru_cache(maxsize=16)
def _folded(text: str) -> Folded:
    """Folded once for all of a side's checks on one text."""
    return fold(text)


def _back(folded: Folded, start: int, end: int, placeholder: str) -> Found:
    first, last = folded.span(start, end)
    return Found(first, last, placeholder)


def _disjoint(found: list[Found]) -> list[Found]:
    """The earliest (then longest) of overlapping spans."""
    kept: list[Found] = []
    for item in sorted(found, key=lambda f: (f.start, -f.end)):
        if not kept or item.start >= kept[-1].end:
            kept.append(item)
    return kept
