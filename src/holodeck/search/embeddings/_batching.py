"""Split many texts into requests a provider accepts, and run a few of them at once.

Retries are not repeated here: the clients underneath (the openai SDK, google-genai) already
retry 429 and 5xx answers with exponential backoff and honour `Retry-After`; `_remote`
sets how many times. What reaches this module is a failure after those retries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import numpy as np

from holodeck.search.embeddings._vectors import Vectors


@dataclass(frozen=True)
class BatchLimits:
    """At most `max_texts` texts and `max_chars` characters per request (a text longer
    than `max_chars` goes alone), and at most `concurrency` requests in flight."""

    max_texts: int = 256
    max_chars: int = 400_000  # ~100k tokens: well under OpenAI's 300k tokens per request
    concurrency: int = 4

    def __post_init__(self) -> None:
        if min(self.max_texts, self.max_chars, self.concurrency) < 1:
            raise ValueError(f"batch limits must be positive: {self}")


def plan_batches(texts: Sequence[str], limits: BatchLimits) -> list[range]:
    """Consecutive index ranges covering `texts`, each within `limits`."""
    out: list[range] = []
    start, chars = 0, 0
    for index, text in enumerate(texts):
        size = len(text)
        full = index - start >= limits.max_texts or chars + size > limits.max_chars
        if index > start and full:
            out.append(range(start, index))
            start, chars = index, 0
        chars += size
    if start < len(texts):
        out.append(range(start, len(texts)))
    return out


Request = Callable[[list[str]], Awaitable[Vectors]]


async def embed_in_batches(texts: Sequence[str], request: Request, limits: BatchLimits) -> Vectors:
    """`request` over each batch, `limits.concurrency` at a time; rows stay in input order.

    The first failure cancels the requests still running and is raised as itself."""
    spans = plan_batches(texts, limits)
    gate = asyncio.Semaphore(limits.concurrency)
    results: list[Vectors | None] = [None] * len(spans)

    async def run(slot: int, span: range) -> None:
        async with gate:
            results[slot] = await request([texts[i] for i in span])

    try:
        async with asyncio.TaskGroup() as group:
            for slot, span in enumerate(spans):
                group.create_task(run(slot, span))
    except BaseExceptionGroup as failures:
        raise _first(failures) from None
    return np.concatenate([r for r in results if r is not None], axis=0)


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error
