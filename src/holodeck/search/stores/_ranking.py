"""Top-k with ties kept: every item scoring as high as the k-th is in the answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import numpy as np
import numpy.typing as npt

from holodeck.search._types import Scored


def top_rows(scores: npt.NDArray[np.floating], k: int) -> npt.NDArray[np.intp]:
    """Indexes of the k highest scores and of every score tied with the k-th, best first
    (equal scores in index order)."""
    if k <= 0 or scores.size == 0:
        return np.empty(0, dtype=np.intp)
    if k < scores.size:
        kth = np.partition(scores, scores.size - k)[scores.size - k]
        rows = np.flatnonzero(scores >= kth)
    else:
        rows = np.arange(scores.size)
    order = np.lexsort((rows, -scores[rows]))
    return rows[order]


def cut_with_ties(ranked: Sequence[Scored], k: int) -> list[Scored]:
    """The first k of `ranked` (best first) and the ones after tied with the k-th."""
    if k <= 0:
        return []
    kept = list(ranked[:k])
    if len(kept) == k:
        kth = kept[-1].score
        kept += [hit for hit in ranked[k:] if hit.score >= kth]
    return kept


async def nearest_with_ties(
    fetch: Callable[[int], Awaitable[list[Scored]]], k: int, total: int
) -> list[Scored]:
    """`fetch(n)` gives a server's n best, best first; ask for more until the last one
    fetched scores below the k-th (or the collection is exhausted), then cut with ties."""
    if k <= 0 or total <= 0:
        return []
    wanted = min(total, k + max(8, k))
    while True:
        ranked = await fetch(wanted)
        if len(ranked) < wanted or wanted >= total or len(ranked) <= k:
            break
        if ranked[-1].score < ranked[k - 1].score:
            break
        wanted = min(total, wanted * 2)
    ranked.sort(key=lambda hit: -hit.score)  # stable: the server's order among equals
    return cut_with_ties(ranked, k)
