"""Hosted services reached through their OpenAI-compatible APIs (Groq, DeepSeek,
OpenRouter, Together AI, Fireworks AI, xAI, Mistral, ...).

Each is pydantic-ai's `OpenAIChatModel` on an `OpenAICompatibleProvider` named for the
service, with the service's default base URL and the model profile pydantic-ai keeps for
it (which JSON schemas, tool choices and thinking fields the service accepts). One path
for all of them, rather than each dedicated provider class, because those classes fix
their base URL: a proxy, a regional endpoint or a test server could not be named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from holodeck.spec.models.model_settings import ProviderType

if TYPE_CHECKING:
    import httpx2
    from pydantic_ai.models import Model
    from pydantic_ai.profiles import ModelProfile

    ProfileFunc = Callable[[str], ModelProfile | None]

# The services' documented OpenAI-compatible base URLs (pydantic-ai's defaults;
# tests/llm/test_more_providers.py holds them equal).
HOSTED_URLS: dict[ProviderType, str] = {
    ProviderType.GROQ: "https://api.groq.com/openai/v1",
    ProviderType.DEEPSEEK: "https://api.deepseek.com",
    ProviderType.OPENROUTER: "https://openrouter.ai/api/v1",
    ProviderType.TOGETHER_AI: "https://api.together.xyz/v1",
    ProviderType.FIREWORKS_AI: "https://api.fireworks.ai/inference/v1",
    ProviderType.XAI: "https://api.x.ai/v1",
    ProviderType.MISTRAL: "https://api.mistral.ai/v1",
    ProviderType.CEREBRAS: "https://api.cerebras.ai/v1",
    ProviderType.MOONSHOT: "https://api.moonshot.ai/v1",
    ProviderType.NEBIUS: "https://api.studio.nebius.com/v1",
    ProviderType.OVHCLOUD: "https://oai.endpoints.kepler.ai.cloud.ovh.net/v1",
    ProviderType.SAMBANOVA: "https://api.sambanova.ai/v1",
    ProviderType.DASHSCOPE: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
    ProviderType.VERCEL_AI_GATEWAY: "https://ai-gateway.vercel.sh/v1",
}


def is_hosted(kind: ProviderType) -> bool:
    return kind in HOSTED_URLS


def hosted_model(
    kind: ProviderType,
    name: str,
    api_key: str,
    endpoint: str | None,
    http_client: httpx2.AsyncClient | None = None,
) -> Model:
    """The chat model `name` on service `kind`, at `endpoint` or the service's own URL
    (through `http_client` when given)."""
    from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider

    from holodeck.llm.openai_requests import lean_chat_model  # deferred: openai

    provider = OpenAICompatibleProvider(
        kind.value,
        base_url=endpoint or HOSTED_URLS[kind],
        api_key=api_key,
        profile=_profile(kind),
        http_client=http_client,
    )
    return lean_chat_model(name, provider)


# pydantic-ai's names of the services whose provider class carries a model profile
_PYDANTIC_AI_NAMES: dict[ProviderType, str] = {
    ProviderType.DEEPSEEK: "deepseek",
    ProviderType.OPENROUTER: "openrouter",
    ProviderType.TOGETHER_AI: "together",
    ProviderType.FIREWORKS_AI: "fireworks",
    ProviderType.CEREBRAS: "cerebras",
    ProviderType.MOONSHOT: "moonshotai",
    ProviderType.NEBIUS: "nebius",
    ProviderType.OVHCLOUD: "ovhcloud",
    ProviderType.SAMBANOVA: "sambanova",
    ProviderType.DASHSCOPE: "alibaba",
    ProviderType.VERCEL_AI_GATEWAY: "vercel",
}


def _profile(kind: ProviderType) -> ProfileFunc:
    """pydantic-ai's model profile for the service, imported only when it is used."""
    named = _PYDANTIC_AI_NAMES.get(kind)
    if named is not None:
        from pydantic_ai.providers import infer_provider_class

        profile: ProfileFunc = infer_provider_class(named).model_profile
        return profile
    # Groq, Mistral and xAI have pydantic-ai providers only for their own SDKs (groq,
    # mistralai, xai-sdk over gRPC); their OpenAI-compatible APIs get the family profile
    # on the JSON schema handling OpenAIChatModel needs.
    return _family_profile(kind)


def _family_profile(kind: ProviderType) -> ProfileFunc:
    from pydantic_ai.profiles import merge_profile
    from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer, OpenAIModelProfile

    family: ProfileFunc
    if kind is ProviderType.GROQ:
        from pydantic_ai.profiles.groq import groq_model_profile

        family = groq_model_profile
    elif kind is ProviderType.MISTRAL:
        from pydantic_ai.profiles.mistral import mistral_model_profile

        family = mistral_model_profile
    elif kind is ProviderType.XAI:
        from pydantic_ai.profiles.grok import grok_model_profile

        family = grok_model_profile
    else:
        raise AssertionError(f"no profile for {kind}")
    base = OpenAIModelProfile(json_schema_transformer=OpenAIJsonSchemaTransformer)

    def profile(name: str) -> ModelProfile:
        return merge_profile(base, family(name))

    return profile
