"""BM25 over a handful of texts in memory, for stores whose server ranks no keywords.

>>> ranked = bm25_rank(["red apple", "green apple pie", "blue sky"], "apple pie")
>>> [index for index, _ in ranked]
[1, 0]
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_WORD = re.compile(r"\w+", re.UNICODE)
K1 = 1.2
B = 0.75


def words(text: str) -> list[str]:
    """The lower-cased words of `text` (letters, digits, underscores); punctuation and
    query syntax characters only separate words."""
    return [word.casefold() for word in _WORD.findall(text)]


def bm25_rank(texts: Sequence[str], query: str) -> list[tuple[int, float]]:
    """(index in `texts`, BM25 score > 0) of every text sharing a word with `query`,
    best first; equal scores in index order."""
    terms = set(words(query))
    if not terms or not texts:
        return []
    counted = [Counter(words(text)) for text in texts]
    lengths = [sum(counts.values()) for counts in counted]
    average = sum(lengths) / len(lengths) or 1.0
    frequency = {term: sum(1 for counts in counted if term in counts) for term in terms}
    total = len(texts)
    scored: list[tuple[int, float]] = []
    for index, counts in enumerate(counted):
        score = 0.0
        for term in terms:
            found = counts.get(term, 0)
            if not found:
                continue
            # the "+1" form of idf: positive even for a word in most texts
            idf = math.log(1 + (total - frequency[term] + 0.5) / (frequency[term] + 0.5))
            norm = K1 * (1 - B + B * lengths[index] / average)
            score += idf * found * (K1 + 1) / (found + norm)
        if score > 0:
            scored.append((index, score))
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored
