"""Reciprocal rank fusion: merge ranked lists by rank, not by their incomparable scores."""

from __future__ import annotations

from collections.abc import Sequence

from holodeck.search._types import Scored


def fuse(
    rankings: Sequence[tuple[Sequence[Scored], float]], *, k: int = 60
) -> list[tuple[Scored, float]]:
    """Each chunk's fused score: the sum over lists of `weight / (k + rank)`, normalised so
    that first place in every list scores 1.0. Best first; ties keep the first list's order.

    `rankings` holds (ranked list, weight) pairs; a chunk keeps the entry of the first list
    it appears in."""
    best = sum(weight for _, weight in rankings) / (k + 1)
    if best <= 0:
        return []
    fused: dict[str, float] = {}
    first: dict[str, Scored] = {}
    for ranked, weight in rankings:
        for rank, scored in enumerate(ranked, start=1):
            key = scored.chunk.id
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
            first.setdefault(key, scored)
    order = sorted(fused, key=lambda key: -fused[key])  # stable: first-seen order on ties
    return [(first[key], fused[key] / best) for key in order]


def top_with_ties(ranked: Sequence[tuple[Scored, float]], k: int) -> list[tuple[Scored, float]]:
    """The first k, plus any that score exactly as the k-th (equal matches all count)."""
    if len(ranked) <= k:
        return list(ranked)
    cut = ranked[k - 1][1]
    end = k
    while end < len(ranked) and ranked[end][1] == cut:
        end += 1
    return list(ranked[:end])
