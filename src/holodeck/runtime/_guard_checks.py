"""What a guardrail's text checks find: regular expressions, whole keywords, personal
data (emails, phone numbers, card numbers that pass the Luhn check) and length. Each
finder returns the spans it matched with the placeholder that redacts them; `redact`
replaces them. Pure functions, no model: they run on every message."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from holodeck.spec.models.guardrails import GuardrailCheck

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
# 13 to 19 digits, in groups split by single spaces or dashes
CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])")
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
    found: list[Found] = []
    if "email" in kinds:
        found += [Found(m.start(), m.end(), PLACEHOLDER["email"]) for m in EMAIL.finditer(text)]
    if "card" in kinds:
        for match in CARD.finditer(text):
            digits = re.sub(r"\D", "", match.group())
            if 13 <= len(digits) <= 19 and luhn_valid(digits):
                found.append(Found(match.start(), match.end(), PLACEHOLDER["card"]))
    if "phone" in kinds:
        for match in PHONE.finditer(text):
            count = sum(c.isdigit() for c in match.group())
            overlaps = any(f.start < match.end() and match.start() < f.end for f in found)
            if count in PHONE_DIGITS and not overlaps:
                found.append(Found(match.start(), match.end(), PLACEHOLDER["phone"]))
    return _disjoint(found)


def find_patterns(text: str, patterns: Sequence[str]) -> list[Found]:
    found = [
        Found(m.start(), m.end(), REDACTED)
        for pattern in patterns
        for m in re.finditer(pattern, text)
        if m.end() > m.start()  # an empty match redacts nothing
    ]
    return _disjoint(found)


def find_keywords(text: str, keywords: Sequence[str]) -> list[Found]:
    """Each keyword (or phrase) as a whole word, whatever its case."""
    found = []
    for keyword in keywords:
        pattern = rf"(?<!\w){re.escape(keyword)}(?!\w)"
        found += [Found(m.start(), m.end(), REDACTED) for m in re.finditer(pattern, text, re.I)]
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


def _disjoint(found: list[Found]) -> list[Found]:
    """The earliest (then longest) of overlapping spans."""
    kept: list[Found] = []
    for item in sorted(found, key=lambda f: (f.start, -f.end)):
        if not kept or item.start >= kept[-1].end:
            kept.append(item)
    return kept
