"""What every embedder does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class Embedder(Protocol):
    """Embeds texts with one model.

    `name` identifies the model and its settings (`openai:text-embedding-3-small`,
    `local:all-MiniLM-L6-v2`): vectors made under one name are interchangeable, so it keys
    the cache and names the store's collection."""

    @property
    def name(self) -> str: ...

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One L2-normalised float32 row per text, in order (shape `(len(texts), dim)`)."""
        ...
