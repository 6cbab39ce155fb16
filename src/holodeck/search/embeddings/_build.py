"""`choose_embedder`: the embedder a vectorstore tool uses, built from its plan."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from holodeck.errors import ConfigurationError
from holodeck.llm.embedding_models import (
    GOOGLE_PROVIDERS,
    ProviderEmbeddings,
    embedding_endpoint,
    embedding_model,
)
from holodeck.search.embeddings._cache import CachedEmbedder
from holodeck.search.embeddings._local import LocalEmbedder, check_local_dimensions
from holodeck.search.embeddings._plan import NoEmbedder, Plan, describe_plan, plan_embedder
from holodeck.search.embeddings._protocol import Embedder
from holodeck.search.embeddings._remote import ModelEmbedder
from holodeck.spec.models.model_settings import ModelSettings, ProviderType
from holodeck.spec.models.settings import Settings

if TYPE_CHECKING:
    from holodeck.config.credentials import ResolvedModel
    from holodeck.net import OutboundPolicy

CACHE_FILE = "embeddings.sqlite3"
DEFAULT_RETRIES = 4  # after the first try; the SDKs back off 0.5 s, 1 s, 2 s, 4 s
DEFAULT_TIMEOUT = 60.0

# Output sizes of well-known models (Ollama tags dropped); those in ADJUSTABLE take
# `dimensions` (they were trained to be shortened), the others have one size.
KNOWN_SIZES: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "mistral-embed": 1024,
    "gemini-embedding-001": 3072,
}
ADJUSTABLE = frozenset({"text-embedding-3-small", "text-embedding-3-large", "gemini-embedding-001"})


def choose_embedder(
    embedding_model: str | None,
    agent_model: ModelSettings,
    settings: Settings,
    env: Mapping[str, str],
    *,
    dimensions: int | None,
    cache_dir: Path,
    lent: Collection[str] | None = None,
    outbound: OutboundPolicy | None = None,
) -> Embedder | NoEmbedder:
    """The embedder `embedding_model` names (None: the agent provider's standard model),
    cached in `cache_dir`; `NoEmbedder` says why none is available and how to get one.

        embedder = choose_embedder(None, agent.model, settings, os.environ,
                                   dimensions=None, cache_dir=project / ".holodeck/cache")

    Raises `ConfigurationError` for a malformed model string or an impossible size."""
    if dimensions is not None and dimensions < 1:
        raise ConfigurationError(
            f"embedding dimensions must be a positive number, not {dimensions}",
            hint="remove `dimensions` to keep the model's own size",
        )
    plan = plan_embedder(embedding_model, agent_model, settings, env, lent=lent)
    if isinstance(plan, NoEmbedder):
        return plan
    inner: Embedder
    if plan.kind == "local":
        check_local_dimensions(dimensions)
        inner = LocalEmbedder()
    else:
        inner = _remote_embedder(plan, settings, env, dimensions, outbound)
    return CachedEmbedder(inner, cache_dir / CACHE_FILE)


def describe_default(agent_model: ModelSettings, settings: Settings, env: Mapping[str, str]) -> str:
    """One line for `holodeck validate`: the model tools without `embedding_model` use."""
    return describe_plan(plan_embedder(None, agent_model, settings, env))


def _remote_embedder(
    plan: Plan,
    settings: Settings,
    env: Mapping[str, str],
    dimensions: int | None,
    outbound: OutboundPolicy | None,
) -> ModelEmbedder:
    resolved = plan.resolved
    assert resolved is not None
    base = plan.model.split(":", 1)[0] if resolved.provider is ProviderType.OLLAMA else plan.model
    known = KNOWN_SIZES.get(base)
    if dimensions is not None and known is not None:
        adjustable = base in ADJUSTABLE
        if dimensions > known or (dimensions != known and not adjustable):
            limit = f"at most {known}" if adjustable else str(known)
            raise ConfigurationError(
                f"embedding dimensions {dimensions} cannot be had from {plan.label}: "
                f"its vectors have {limit} dimensions",
                hint=f"set the dimensions to {limit} or remove them, or choose a model that "
                "takes a size (openai/text-embedding-3-small)",
            )
        if dimensions == known:
            dimensions = None  # the model's own size: nothing to ask for
    execution = settings.execution
    retries = DEFAULT_RETRIES
    timeout = DEFAULT_TIMEOUT
    if execution is not None:
        retries = execution.max_retries if execution.max_retries is not None else retries
        timeout = execution.model_timeout or timeout
    written = resolved.settings.provider
    # an alias (`azure`, `gemini`) makes the same vectors as its type: one name for both;
    # a config.yaml entry keeps its own, as it may point at another server
    source = written if written in settings.providers else resolved.provider.value
    suffix = f"[{dimensions}]" if dimensions is not None else ""
    return ModelEmbedder(
        name=f"{source}:{plan.model}{suffix}",
        model=_model(resolved, plan.model, dimensions, retries, timeout, env, outbound),
        provider=written,
        model_name=plan.model,
        endpoint=embedding_endpoint(resolved, env),
        size=dimensions or known,
    )


def _model(
    resolved: ResolvedModel,
    name: str,
    dimensions: int | None,
    retries: int,
    timeout: float,
    env: Mapping[str, str],
    outbound: OutboundPolicy | None,
) -> ProviderEmbeddings:
    """The provider's embedding model for `resolved`; the SDK clients do the retrying. An
    endpoint an uploaded definition names (`outbound` given) is reached through a client
    that checks every connection."""
    http_client = None
    if (
        outbound is not None
        and resolved.provider not in GOOGLE_PROVIDERS
        and resolved.sources.get("endpoint") == "agent"
    ):
        from holodeck.net import checked_client  # deferred: loads httpx2

        http_client = checked_client(outbound, timeout=timeout)
    return embedding_model(
        resolved,
        name,
        dimensions=dimensions,
        retries=retries,
        timeout=timeout,
        env=env,
        http_client=http_client,
    )
