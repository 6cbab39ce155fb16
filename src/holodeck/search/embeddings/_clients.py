"""pydantic-ai embedding models on SDK clients that retry 429 and 5xx themselves.

The openai SDK retries 408/409/429/5xx with exponential backoff (0.5 s doubling, at most
8 s) and honours `Retry-After`/`retry-after-ms` up to two minutes; google-genai does the
same when given retry options. Only the number of retries and the timeout are set here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from holodeck.llm.hosted import HOSTED_URLS, is_hosted
from holodeck.llm.providers import OLLAMA_DEFAULT, UNUSED_KEY
from holodeck.spec.models.model_settings import ProviderType

if TYPE_CHECKING:
    import httpx2
    from pydantic_ai.embeddings import EmbeddingModel

    from holodeck.config.credentials import ResolvedModel

OPENAI_URL = "https://api.openai.com/v1"
# Vertex AI without an express-mode key: Application Default Credentials in a project and
# region (Google's variables first, then LiteLLM's), as for chat models
VERTEX_PROJECT_VARS = ("GOOGLE_CLOUD_PROJECT", "VERTEXAI_PROJECT")
VERTEX_LOCATION_VARS = ("GOOGLE_CLOUD_LOCATION", "VERTEXAI_LOCATION")


def openai_model(
    resolved: ResolvedModel,
    name: str,
    retries: int,
    timeout: float,
    http_client: httpx2.AsyncClient | None = None,
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
        assert resolved.endpoint is not None  # the plan refused Azure without one
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
    else:  # openai, or an OpenAI-compatible server (its endpoint was checked by the plan)
        base_url = resolved.endpoint or OPENAI_URL
    client = AsyncOpenAI(
        base_url=base_url,
        api_key=key or UNUSED_KEY,  # local servers ignore it; the SDK insists on one
        max_retries=retries,
        timeout=timeout,
        http_client=http_client,
    )
    return OpenAIEmbeddingModel(name, provider=OpenAIProvider(openai_client=client))


def google_model(
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
        project = _first(env, VERTEX_PROJECT_VARS)
        location = _first(env, VERTEX_LOCATION_VARS) or "us-central1"
        client = Client(vertexai=True, project=project, location=location, http_options=options)
    elif resolved.provider is ProviderType.VERTEX_AI:
        client = Client(vertexai=True, api_key=key, http_options=options)
    else:
        client = Client(api_key=key, http_options=options)
    return GoogleEmbeddingModel(name, provider=GoogleProvider(client=client))


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    return next((env[n] for n in names if env.get(n)), None)
