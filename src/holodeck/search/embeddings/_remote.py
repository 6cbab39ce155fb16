"""An embedder over a provider's embedding model (OpenAI's API and every OpenAI-compatible
server, Azure OpenAI, Gemini; built in `holodeck.llm.embedding_models`), with batching and
errors a user can act on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from holodeck.errors import ExecutionError
from holodeck.llm.embedding_models import ProviderEmbeddings
from holodeck.llm.errors import explain
from holodeck.search.embeddings._batching import BatchLimits, embed_in_batches
from holodeck.search.embeddings._vectors import Vectors, empty, normalised


@dataclass
class ModelEmbedder:
    """Embeds with `model`; `provider` and `model_name` name it in error messages,
    `endpoint` says where it runs (without credentials).

    `size` is the length of its vectors when known ahead (so that an empty input needs no
    request); it is learnt from the first answer otherwise."""

    name: str
    model: ProviderEmbeddings
    provider: str
    model_name: str
    endpoint: str
    size: int | None = None
    limits: BatchLimits = field(default_factory=BatchLimits)

    @property
    def producer(self) -> str:
        """The model and where it runs: another endpoint may serve another model."""
        return f"{self.name} at {self.endpoint}"

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit-length float32 row per text, in order."""
        if not texts:
            return empty(self.size)
        rows = await embed_in_batches(texts, self._request, self.limits)
        self.size = int(rows.shape[1])
        return rows

    async def _request(self, batch: list[str]) -> Vectors:
        try:
            embeddings = await self.model.embed(batch)
        except Exception as exc:
            # provider failures (after the SDK's retries) and missing Google Cloud
            # credentials become one line naming the model and the fix
            error = explain(exc, self.provider, self.model_name)
            if error is None:
                raise
            raise error from None
        if len(embeddings) != len(batch):
            raise ExecutionError(
                f"embedding model {self.name} answered {len(embeddings)} vectors "
                f"for {len(batch)} texts",
                hint="check that the endpoint serves an OpenAI-compatible /embeddings API",
            )
        return normalised(embeddings, self.name)
