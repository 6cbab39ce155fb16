"""What every embedder does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class Embedder(Protocol):
    """Embeds texts with one model.

    `name` identifies the model and its settings as a user reads them
    (`openai:text-embedding-3-small`, `local:all-MiniLM-L6-v2`). An embedder may also
    have a `producer`: its name and where it runs (`openai:my-model at
    http://gpu-box:8000/v1`), since one name at two endpoints may be two models; vectors
    of one producer are interchangeable, so it keys the cache and the store's collection
    (`producer_of`)."""

    @property
    def name(self) -> str: ...

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One L2-normalised float32 row per text, in order (shape `(len(texts), dim)`)."""
        ...


def producer_of(embedder: Embedder) -> str:
    """What makes `embedder`'s vectors: its `producer` when it has one, else its name."""
    producer = getattr(embedder, "producer", None)
    return producer if isinstance(producer, str) else embedder.name
