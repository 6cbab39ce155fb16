"""An embedder over one of pydantic-ai's embedding models (OpenAI's API and every
OpenAI-compatible server, Azure OpenAI, Gemini), with batching and errors a user can act on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from holodeck.errors import ExecutionError
from holodeck.llm.errors import explain
from holodeck.search.embeddings._batching import BatchLimits, embed_in_batches
from holodeck.search.embeddings._vectors import Vectors, empty, normalised

if TYPE_CHECKING:
    from pydantic_ai.embeddings import EmbeddingModel, EmbeddingSettings


@dataclass
class ModelEmbedder:
    """Embeds with `model`; `provider` and `model_name` name it in error messages.

    `size` is the length of its vectors when known ahead (so that an empty input needs no
    request); it is learnt from the first answer otherwise."""

    name: str
    model: EmbeddingModel
    provider: str
    model_name: str
    settings: EmbeddingSettings | None = None
    size: int | None = None
    limits: BatchLimits = field(default_factory=BatchLimits)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit-length float32 row per text, in order."""
        if not texts:
            return empty(self.size)
        rows = await embed_in_batches(texts, self._request, self.limits)
        self.size = int(rows.shape[1])
        return rows

    async def _request(self, batch: list[str]) -> Vectors:
        try:
            # one kind of input for queries and chunks alike: both sides of a search
            # must be embedded the same way, as the protocol has no query/document split
            result = await self.model.embed(batch, input_type="document", settings=self.settings)
        except Exception as exc:
            # provider failures (after the SDK's retries) and missing Google Cloud
            # credentials become one line naming the model and the fix
            error = explain(exc, self.provider, self.model_name)
            if error is None:
                raise
            raise error from None
        if len(result.embeddings) != len(batch):
            raise ExecutionError(
                f"embedding model {self.name} answered {len(result.embeddings)} vectors "
                f"for {len(batch)} texts",
                hint="check that the endpoint serves an OpenAI-compatible /embeddings API",
            )
        return normalised(result.embeddings, self.name)
