"""Turn text into vectors: provider APIs or a local model, with an on-disk cache.

embedder = choose_embedder("openai/text-embedding-3-small", agent.model, settings,
                           os.environ, dimensions=None, cache_dir=cache)
if isinstance(embedder, NoEmbedder):
    print(embedder.reason)
else:
    vectors = await embedder.embed(["a chunk", "another"])  # (2, dim) float32
"""

from holodeck.search.embeddings._batching import BatchLimits
from holodeck.search.embeddings._build import choose_embedder, describe_default
from holodeck.search.embeddings._cache import CachedEmbedder
from holodeck.search.embeddings._local import LOCAL_MODEL, LOCAL_SIZE, LocalEmbedder
from holodeck.search.embeddings._plan import NoEmbedder
from holodeck.search.embeddings._protocol import Embedder
from holodeck.search.embeddings._remote import ModelEmbedder

__all__ = [
    "LOCAL_MODEL",
    "LOCAL_SIZE",
    "BatchLimits",
    "CachedEmbedder",
    "Embedder",
    "LocalEmbedder",
    "ModelEmbedder",
    "NoEmbedder",
    "choose_embedder",
    "describe_default",
]
