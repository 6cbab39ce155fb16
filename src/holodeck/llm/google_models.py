"""Gemini through pydantic-ai's `GoogleModel` (the google-genai SDK): the Gemini API
(`google/...`, `gemini/...`) and Vertex AI (`vertex_ai/...`).

The SDK adds 0.6 s (warm) to 1.4 s (cold) of imports, so it is imported here, when a
Google model is built, and never at CLI start.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.util import find_spec
from typing import TYPE_CHECKING

from holodeck.errors import EXIT_CONFIG
from holodeck.llm.errors import ProviderError

if TYPE_CHECKING:
    import httpx2
    from pydantic_ai.models import Model

# Vertex AI without an express-mode key: the project and region Application Default
# Credentials are used in (Google's variables first, then LiteLLM's).
PROJECT_VARS = ("GOOGLE_CLOUD_PROJECT", "VERTEXAI_PROJECT")
LOCATION_VARS = ("GOOGLE_CLOUD_LOCATION", "VERTEXAI_LOCATION")


def gemini_model(
    provider: str,
    name: str,
    api_key: str,
    endpoint: str | None,
    http_client: httpx2.AsyncClient | None = None,
) -> Model:
    """`name` on the Gemini API (generativelanguage), or at `endpoint` when given
    (through `http_client` when given)."""
    _require_sdk(provider, name)
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    provider_ = GoogleProvider(api_key=api_key, base_url=endpoint, http_client=http_client)
    return GoogleModel(name, provider=provider_)


def vertex_model(
    provider: str, name: str, api_key: str | None, endpoint: str | None, env: Mapping[str, str]
) -> Model:
    """`name` on Vertex AI: with an express-mode key, or Application Default Credentials
    in a project (GOOGLE_CLOUD_PROJECT) and region (GOOGLE_CLOUD_LOCATION, default
    us-central1)."""
    _require_sdk(provider, name)
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google_cloud import GoogleCloudProvider

    if api_key:
        return GoogleModel(name, provider=GoogleCloudProvider(api_key=api_key, base_url=endpoint))
    project = _first(env, PROJECT_VARS)
    if project is None:
        raise ProviderError(
            provider,
            name,
            "no Vertex AI project or key is set",
            "Set GOOGLE_CLOUD_PROJECT (and GOOGLE_CLOUD_LOCATION) with Application Default "
            "Credentials (`gcloud auth application-default login`), or GOOGLE_API_KEY for "
            "Vertex AI express mode",
            exit_code=EXIT_CONFIG,
        )
    location = _first(env, LOCATION_VARS) or "us-central1"
    try:
        cloud = GoogleCloudProvider(project=project, location=location, base_url=endpoint)
    except Exception as exc:  # google.auth's DefaultCredentialsError, among others
        raise ProviderError(
            provider,
            name,
            f"no Google Cloud credentials ({' '.join(str(exc).split())[:120]})",
            "Run `gcloud auth application-default login` or set "
            "GOOGLE_APPLICATION_CREDENTIALS to a service account file",
            exit_code=EXIT_CONFIG,
        ) from None
    return GoogleModel(name, provider=cloud)


def _require_sdk(provider: str, name: str) -> None:
    """A HoloDeck installed without its dependencies says how to get the SDK back."""

    try:
        found = find_spec("google.genai") is not None
    except ImportError:  # no `google` namespace package at all
        found = False
    if not found:
        raise ProviderError(
            provider,
            name,
            "the google-genai SDK is not installed",
            "Install it: pip install 'pydantic-ai-slim[google]'",
        )


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    return next((env[n] for n in names if env.get(n)), None)
