"""Cut text into chunks of at most `size` tokens, each repeating the tail of the last.

A token is a word or one punctuation mark (the regex below), so sizes mean the same on
every machine and nothing has to be downloaded. Cuts fall on paragraph boundaries; a
paragraph too long for a chunk is cut between sentences, a sentence too long between
words. Chunks are returned as character spans of the text, so their text is the source's
own (spacing and line breaks kept).

    >>> text = "One two. Three four.\\n\\nFive six."
    >>> [text[a:b] for a, b in split(text, size=6, overlap=0)]
    ['One two. Three four.', 'Five six.']
"""

from __future__ import annotations

import re

TOKEN = re.compile(r"\w+|[^\w\s]")
_SENTENCE_END = frozenset(".!?…。！？")
_CLOSERS = frozenset("\"')]}”’»")

# Boundary kinds before a token: inside a sentence, between sentences, between paragraphs.
_WORD, _SENTENCE, _PARAGRAPH = 0, 1, 2


def split(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """Character spans `(start, end)` of the chunks of `text`, in order.

    Each chunk holds at most `size` tokens; each after the first starts with the last
    `overlap` tokens of the one before (fewer when that one is shorter)."""
    # Every non-space character belongs to a token, so short texts need no token positions.
    if len(text) <= size or len(TOKEN.findall(text)) <= size:
        stripped = text.strip()
        if not stripped:
            return []
        start = text.index(stripped[0])
        return [(start, start + len(stripped))]
    starts: list[int] = []
    ends: list[int] = []
    for match in TOKEN.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    count = len(starts)
    kinds = _boundary_kinds(text, starts, ends)
    allowed = _allowed_cuts(kinds, count, max(size - overlap, 1))
    spans: list[tuple[int, int]] = []
    begin = previous_end = 0
    while True:
        limit = min(begin + size, count)
        end = limit if limit == count else _cut(allowed, kinds, previous_end, limit)
        spans.append((starts[begin], ends[end - 1]))
        if end == count:
            return spans
        previous_end = end
        begin = max(end - overlap, 0)


def _boundary_kinds(text: str, starts: list[int], ends: list[int]) -> bytearray:
    """For each token index i, the kind of boundary between token i-1 and token i."""
    kinds = bytearray(len(starts) + 1)
    kinds[0] = kinds[len(starts)] = _PARAGRAPH
    for index in range(1, len(starts)):
        gap_start, gap_end = ends[index - 1], starts[index]
        if gap_start == gap_end:
            continue  # "word." or "a-b": no space, no boundary
        newlines = text.count("\n", gap_start, gap_end)
        if newlines >= 2:
            kinds[index] = _PARAGRAPH
        elif newlines == 1 or _ends_sentence(text, starts, index - 1):
            kinds[index] = _SENTENCE
    return kinds


def _ends_sentence(text: str, starts: list[int], index: int) -> bool:
    mark = text[starts[index]]
    if mark in _CLOSERS and index > 0:
        mark = text[starts[index - 1]]
    return mark in _SENTENCE_END


def _allowed_cuts(kinds: bytearray, count: int, fit: int) -> bytearray:
    """Where a chunk may end: between paragraphs; inside a paragraph longer than `fit`
    tokens between its sentences; inside a sentence longer than `fit` anywhere."""
    allowed = bytearray(count + 1)
    paragraph_start = 0
    for index in range(1, count + 1):
        if kinds[index] != _PARAGRAPH:
            continue
        allowed[index] = 1
        if index - paragraph_start > fit:
            _allow_sentences(kinds, allowed, paragraph_start, index, fit)
        paragraph_start = index
    return allowed


def _allow_sentences(kinds: bytearray, allowed: bytearray, start: int, end: int, fit: int) -> None:
    sentence_start = start
    for index in range(start + 1, end + 1):
        if kinds[index] < _SENTENCE:
            continue
        allowed[index] = 1
        if index - sentence_start > fit:
            allowed[sentence_start + 1 : index] = b"\x01" * (index - sentence_start - 1)
        sentence_start = index


def _cut(allowed: bytearray, kinds: bytearray, previous_end: int, limit: int) -> int:
    """The farthest cut after `previous_end` and at most `limit`: an allowed one, else a
    sentence boundary, else `limit` itself (between two words)."""
    index = allowed.rfind(1, previous_end + 1, limit + 1)
    if index > previous_end:
        return index
    for index in range(limit, previous_end, -1):
        if kinds[index] >= _SENTENCE:
            return index
    return limit
