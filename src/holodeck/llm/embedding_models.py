"""Embedding models at the providers: pydantic-ai's on SDK clients that retry 429 and 5xx
themselves, behind `ProviderEmbeddings`, which callers above llm/ use.

    embeddings = embedding_model(resolved, "text-embedding-3-small", dimensions=None,
                                 retries=4, timeout=60.0, env=os.environ)
    rows = await embeddings.embed(["a chunk", "another"])

The openai SDK retries 408/409/429/5xx with exponential backoff (0.5 s doubling, at most
8 s) and honours `Retry-After`/`retry-after-ms` up to two minutes; google-genai does the
same when given retry options. Only the number of retries and the timeout are set here.
The SDKs and pydantic-ai are imported when a model is built, never at CLI start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from holodeck.llm.google_models import LOCATION_VARS, PROJECT_VARS
from holodeck.llm.hosted import HOSTED_URLS, is_hosted
from holodeck.llm.providers import OLLAMA_DEFAULT, UNUSED_KEY
from holodeck.spec.models.model_settings import ProviderType

if TYPE_CHECKING:
    import httpx2
    from pydantic_ai.embeddings import EmbeddingModel, EmbeddingSettings

    from holodeck.config.credentials import ResolvedModel

OPENAI_URL = "https://api.openai.com/v1"
GEMINI_URL = "https://generativelanguage.googleapis.com"
GOOGLE_PROVIDERS = (ProviderType.GOOGLE, ProviderType.VERTEX_AI)


class ProviderEmbeddings:
    """One provider's embedding model with the options every request carries."""

    def __init__(self, model: EmbeddingModel, settings: EmbeddingSettings | None) -> None:
        self.model = model
        self.settings = settings

    async def embed(self, batch: list[str]) -> Sequence[Sequence[float]]:
        """One vector per text of `batch`, as the provider answered (one request)."""
        # one kind of input for queries and chunks alike: both sides of a search
        # must be embedded the same way, as the protocol has no query/document split
        result = await self.model.embed(batch, input_type="document", settings=self.settings)
        return result.embeddings


def embedding_model(
    resolved: ResolvedModel,
    name: str,
    *,
    dimensions: int | None,
    retries: int,
    timeout: float,
    env: Mapping[str, str],
    http_client: httpx2.AsyncClient | None = None,
) -> ProviderEmbeddings:
    """`name` at `resolved`'s provider, asking for `dimensions` (None: the model's own
    size); the SDK clients retry `retries` times. `http_client` carries the requests of
    OpenAI-style providers when given (Google's SDK uses its own)."""
    options: EmbeddingSettings = {}
    if dimensions is not None:
        options["dimensions"] = dimensions
    if resolved.provider in GOOGLE_PROVIDERS:
        options.update(_google_task(name))
        model = _google_model(resolved, name, retries, timeout, env)
    else:
        model = _openai_model(resolved, name, retries, timeout, http_client)
    return ProviderEmbeddings(model, options or None)


def embedding_endpoint(resolved: ResolvedModel, env: Mapping[str, str]) -> str:
    """Where `resolved`'s embeddings come from, without credentials: the base URL the
    client is given (or the provider's own), or the Vertex AI project and location.

    One model name at two endpoints may be two models with vectors of other widths, so
    the endpoint is part of what identifies the vectors (the cache key, the collection)."""
    kind = resolved.provider
    if resolved.endpoint:
        return _without_secrets(resolved.endpoint)
    if kind is ProviderType.OLLAMA:
        return OLLAMA_DEFAULT
    if is_hosted(kind):
        return HOSTED_URLS[kind]
    if kind is ProviderType.VERTEX_AI:
        if resolved.api_key is not None:
            return "vertex-ai"
        project = _first(env, PROJECT_VARS) or ""
        return f"vertex-ai:{project}/{_first(env, LOCATION_VARS) or 'us-central1'}"
    if kind is ProviderType.GOOGLE:
        return GEMINI_URL
    return OPENAI_URL


def _without_secrets(url: str) -> str:
    """`url` without a user, password, query or fragment, and without a trailing `/`."""
    try:
        parts = urlsplit(url.strip())
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))
    except ValueError:
        return "<unreadable url>"


def _google_task(name: str) -> EmbeddingSettings:
    # queries and chunks go through one `embed`: a symmetric task keeps them comparable
    if name == "gemini-embedding-2":  # pydantic-ai prefixes the task for this one only
        return {"google_task": "sentence similarity"}  # type: ignore[typeddict-unknown-key]
    return {"google_task_type": "SEMANTIC_SIMILARITY"}  # type: ignore[typeddict-unknown-key]


def _openai_model(
    resolved: ResolvedModel,
    name: str,
    retries: int,
    timeout: float,
    http_client: httpx2.AsyncClient | None,
) -> EmbeddingModel:
    """`name` on OpenAI, Azure OpenAI, Ollama, a hosted service or any compatible server
    (through `http_client` when given)."""
    from openai import AsyncAzureOpenAI, AsyncOpenAI
    from pydantic_ai.embeddings.openai import OpenAIEmbeddingModel
    from pydantic_ai.providers.azure import AzureProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    kind = resolved.provider
    key = resolved.api_key.get_secret_value() if resolved.api_key else None
    if kind is ProviderType.AZURE_OPENAI:
        assert resolved.endpoint is not None  # the caller refused Azure without one
        azure = AsyncAzureOpenAI(
            azure_endpoint=resolved.endpoint,
            api_version=resolved.api_version,
            api_key=key,
            max_retries=retries,
            timeout=timeout,
            http_client=http_client,
        )
        return OpenAIEmbeddingModel(name, provider=AzureProvider(openai_client=azure))
    if kind is ProviderType.OLLAMA:
        base_url = resolved.endpoint or OLLAMA_DEFAULT
    elif is_hosted(kind):
        base_url = resolved.endpoint or HOSTED_URLS[kind]
    else:  # openai, or an OpenAI-compatible server (the caller checked its endpoint)
        base_url = resolved.endpoint or OPENAI_URL
    client = AsyncOpenAI(
        base_url=base_url,
        api_key=key or UNUSED_KEY,  # local servers ignore it; the SDK insists on one
        max_retries=retries,
        timeout=timeout,
        http_client=http_client,
    )
    return OpenAIEmbeddingModel(name, provider=OpenAIProvider(openai_client=client))


def _google_model(
    resolved: ResolvedModel, name: str, retries: int, timeout: float, env: Mapping[str, str]
) -> EmbeddingModel:
    """`name` on the Gemini API, or on Vertex AI (express key, or a project's credentials)."""
    from google.genai import Client
    from google.genai.types import HttpOptions, HttpRetryOptions
    from pydantic_ai.embeddings.google import GoogleEmbeddingModel
    from pydantic_ai.providers.google import GoogleProvider

    key = resolved.api_key.get_secret_value() if resolved.api_key else None
    options = HttpOptions(
        base_url=resolved.endpoint,
        timeout=int(timeout * 1000),
        retry_options=HttpRetryOptions(attempts=retries + 1),
    )
    if resolved.provider is ProviderType.VERTEX_AI and key is None:
        project = _first(env, PROJECT_VARS)
        location = _first(env, LOCATION_VARS) or "us-central1"
        client = Client(vertexai=True, project=project, location=location, http_options=options)
    elif resolved.provider is ProviderType.VERTEX_AI:
        client = Client(vertexai=True, api_key=key, http_options=options)
    else:
        client = Client(api_key=key, http_options=options)
    return GoogleEmbeddingModel(name, provider=GoogleProvider(client=client))


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    return next((env[n] for n in names if env.get(n)), None)
