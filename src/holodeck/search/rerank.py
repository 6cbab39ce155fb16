"""Reranking: a second look at a search's first-stage results.

The search finds `candidates` results as usual; a reranker reads the query with each of
them and puts them in a new order; the best `top_k` are returned, each scored by its new
rank (1 for the first, falling evenly to 1/candidates). Two rerankers exist:

- `ModelReranker`: a chat model (any provider) is shown the numbered passages and answers
  with their numbers, most relevant first. Numbers it leaves out keep their first-stage
  order after those it named; anything else in its answer is ignored.
- `WordOverlapReranker`: the offline one, for the `test` model: passages that contain
  more of the query's words come first (ties keep the first-stage order).

    >>> import asyncio
    >>> passages = ["Billing.", "Reset a password."]
    >>> asyncio.run(WordOverlapReranker().order("reset password", passages))
    [1, 0]
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Protocol

from holodeck.search.results import SearchResult

# Sends one prompt to a chat model and returns its text answer.
Ask = Callable[[str], Awaitable[str]]

PASSAGE_CHARS = 1500  # of each passage shown to the model: bounds the prompt
_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"\d+")

PROMPT = """Rank these passages by how well each answers the query.

Query: {query}

{passages}

Answer with the passage numbers only, most relevant first, separated by commas \
(for example: 3, 1, 2)."""


class Reranker(Protocol):
    """Orders passages for a query: their indices, most relevant first."""

    async def order(self, query: str, passages: Sequence[str]) -> list[int]: ...


class ModelReranker:
    """A chat model ranks the passages (`ask` sends it one prompt)."""

    def __init__(self, ask: Ask) -> None:
        self.ask = ask

    async def order(self, query: str, passages: Sequence[str]) -> list[int]:
        shown = "\n\n".join(
            f"[{number}] {' '.join(text.split())[:PASSAGE_CHARS]}"
            for number, text in enumerate(passages, start=1)
        )
        answer = await self.ask(PROMPT.format(query=query, passages=shown))
        return answer_order(answer, len(passages))


class WordOverlapReranker:
    """Offline: more distinct query words in the passage ranks it higher."""

    async def order(self, query: str, passages: Sequence[str]) -> list[int]:
        words = {w.casefold() for w in _WORD.findall(query)}
        found = [len(words & {w.casefold() for w in _WORD.findall(p)}) for p in passages]
        return sorted(range(len(passages)), key=lambda i: -found[i])


def answer_order(answer: str, count: int) -> list[int]:
    """Passage indices in the order the answer names them (1-based numbers), then the
    ones it left out, in their first-stage order.

    >>> answer_order("3, 1", 3)
    [2, 0, 1]
    """
    named: dict[int, None] = {}
    for match in _NUMBER.findall(answer):
        index = int(match) - 1
        if 0 <= index < count:
            named.setdefault(index)
    return [*named, *(i for i in range(count) if i not in named)]


async def rerank(
    query: str, results: Sequence[SearchResult], reranker: Reranker, top_k: int
) -> list[SearchResult]:
    """The best `top_k` of `results` in the reranker's order, scored by their new rank."""
    if not results:
        return []
    order = await reranker.order(query, [r.matched_content for r in results])
    count = len(results)
    return [
        replace(results[index], relevance_score=(count - rank) / count)
        for rank, index in enumerate(order[:top_k])
    ]
