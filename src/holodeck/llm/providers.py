"""Build the pydantic-ai model for a provider, with credentials settled by precedence.

Wire formats live in pydantic-ai's model classes; this module only decides which
class, which client settings and which sampling settings a HoloDeck model gets.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from holodeck.config.credentials import ResolvedModel, UnknownProviderError, resolve_model
from holodeck.errors import EXIT_CONFIG, ConfigurationError
from holodeck.llm.errors import ProviderError, key_variable_for
from holodeck.llm.google_models import gemini_model, vertex_model
from holodeck.llm.hosted import hosted_model, is_hosted
from holodeck.spec.models.model_settings import (
    PROVIDER_ALIASES,
    ModelSettings,
    ProviderType,
    split_model_string,
)
from holodeck.spec.models.settings import Settings

if TYPE_CHECKING:
    import httpx2
    from pydantic_ai.models import Model

    from holodeck.llm.offline_script import OfflineScript
    from holodeck.net import OutboundPolicy

OLLAMA_DEFAULT = "http://localhost:11434/v1"
# Local OpenAI-compatible servers ignore the key, but the SDK insists on one.
UNUSED_KEY = "not-needed"


@dataclass(frozen=True)
class BuiltModel:
    """A model ready for pydantic-ai, plus what error messages should call it."""

    model: Model
    settings: dict[str, Any]
    provider: str
    name: str | None


MODEL_TIMEOUT_S = 600.0  # the OpenAI SDK's own default, for a client HoloDeck makes


def build_model(
    model: ModelSettings,
    settings: Settings,
    env: Mapping[str, str],
    *,
    timeout: float | None = None,
    max_retries: int | None = None,
    responses_api: bool = False,
    lent: Collection[str] | None = None,
    outbound: OutboundPolicy | None = None,
    offline: OfflineScript | None = None,
) -> BuiltModel:
    """The pydantic-ai model for `model`; raises `ProviderError` when it cannot be built.
    `lent`: see `resolve_model` (an uploaded agent's use of the server's credentials).
    `outbound`: an uploaded agent's policy; an endpoint its definition names is reached
    through a client that checks every connection with it (`holodeck.net`).
    `offline`: the run's script, which the offline `test` model follows."""
    try:
        resolved = resolve_model(model, settings, env, lent=lent)
    except UnknownProviderError:
        known = ", ".join([p.value for p in ProviderType] + list(settings.providers))
        aliases = ", ".join(f"{a} ({t})" for a, t in PROVIDER_ALIASES.items())
        raise ProviderError(
            model.provider,
            model.name,
            "unknown provider",
            f"Use one of: {known}; or an alias: {aliases}",
            exit_code=EXIT_CONFIG,
        ) from None
    kind = resolved.provider
    http_client = None
    if outbound is not None and resolved.sources.get("endpoint") == "agent":
        from holodeck.net import checked_client  # deferred: loads httpx2

        # the SDKs time each request themselves; some (Google's) take the client's
        http_client = checked_client(outbound, timeout=timeout or MODEL_TIMEOUT_S)
    instance = _instance(resolved, responses_api, env, http_client, offline)
    return BuiltModel(
        model=instance,
        settings=_sampling(model, kind, timeout, max_retries),
        provider=model.provider,
        name=model.name,
    )


def _instance(
    resolved: ResolvedModel,
    responses_api: bool,
    env: Mapping[str, str],
    http_client: httpx2.AsyncClient | None = None,
    offline: OfflineScript | None = None,
) -> Model:
    """`responses_api`: OpenAI's native tools (web search) need the Responses API.
    `http_client`: the client requests go through (None: the SDK's own)."""
    kind, name = resolved.provider, resolved.name or ""
    key = resolved.api_key.get_secret_value() if resolved.api_key else None
    if key is None and resolved.withheld is not None:
        raise ProviderError(
            resolved.settings.provider,
            name,
            f"no API key: {resolved.withheld}",
            "Put the key for this endpoint in the upload (`model.api_key`), or ask the "
            "server's operator to lend this provider to uploads",
        )
    if kind is ProviderType.TEST:
        from holodeck.llm.offline_model import offline_test_model  # deferred: pydantic_ai

        return offline_test_model(offline)
    if kind is ProviderType.GOOGLE:
        key = _require_key(key, resolved)
        return gemini_model(resolved.settings.provider, name, key, resolved.endpoint, http_client)
    if kind is ProviderType.VERTEX_AI:
        return vertex_model(resolved.settings.provider, name, key, resolved.endpoint, env)
    if kind is ProviderType.ANTHROPIC:
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        _require_key(key, resolved)
        return AnthropicModel(
            name,
            provider=AnthropicProvider(
                api_key=key, base_url=resolved.endpoint, http_client=http_client
            ),
        )

    from holodeck.llm.openai_requests import lean_chat_model as chat_model  # deferred: openai

    if is_hosted(kind):
        key = _require_key(key, resolved)
        return hosted_model(kind, name, key, resolved.endpoint, http_client)
    if kind is ProviderType.AZURE_OPENAI:
        from pydantic_ai.providers.azure import AzureProvider

        _require_key(key, resolved)
        if not resolved.endpoint:
            raise ProviderError(
                kind.value,
                name,
                "no endpoint is set",
                "Set AZURE_OPENAI_ENDPOINT, `model.endpoint`, or providers.azure_openai.endpoint",
                exit_code=EXIT_CONFIG,
            )
        if not resolved.api_version:
            raise ProviderError(
                kind.value,
                name,
                "no API version is set",
                "Set OPENAI_API_VERSION, `model.api_version` or providers.azure_openai.api_version",
                exit_code=EXIT_CONFIG,
            )
        return chat_model(
            name,
            AzureProvider(
                azure_endpoint=resolved.endpoint,
                api_version=resolved.api_version,
                api_key=key,
                http_client=http_client,
            ),
        )
    from pydantic_ai.providers.openai import OpenAIProvider

    if kind is ProviderType.OLLAMA:
        base_url = resolved.endpoint or OLLAMA_DEFAULT
        return chat_model(
            name,
            OpenAIProvider(base_url=base_url, api_key=key or UNUSED_KEY, http_client=http_client),
        )
    if kind is ProviderType.OPENAI_COMPATIBLE:
        if not resolved.endpoint:
            raise ProviderError(
                kind.value,
                name,
                "no endpoint is set",
                "Set `model.endpoint` (or OPENAI_BASE_URL) to the server's /v1 URL",
                exit_code=EXIT_CONFIG,
            )
        return chat_model(
            name,
            OpenAIProvider(
                base_url=resolved.endpoint, api_key=key or UNUSED_KEY, http_client=http_client
            ),
        )
    # openai: a custom endpoint may be a local server that needs no key
    if key is None and resolved.endpoint is None:
        _require_key(key, resolved)
    provider = OpenAIProvider(
        base_url=resolved.endpoint, api_key=key or UNUSED_KEY, http_client=http_client
    )
    if responses_api:
        from pydantic_ai.models.openai import OpenAIResponsesModel

        return OpenAIResponsesModel(name, provider=provider)
    return chat_model(name, provider)


def _require_key(key: str | None, resolved: ResolvedModel) -> str:
    """`key`, or the error saying which variable to set."""
    if key:
        return key
    variable = key_variable_for(resolved.provider.value) or "the provider's key variable"
    raise ProviderError(
        resolved.settings.provider,
        resolved.name,
        "no API key is set",
        f"Set {variable}, `model.api_key: ${{{variable}}}` in agent.yaml, "
        f"or providers.{resolved.settings.provider}.api_key in ~/.holodeck/config.yaml",
        exit_code=EXIT_CONFIG,  # the settings lack it: nothing was asked of the provider
    )


def _sampling(
    model: ModelSettings, kind: ProviderType, timeout: float | None, max_retries: int | None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if model.temperature is not None:
        out["temperature"] = model.temperature
    if model.max_tokens is not None:
        out["max_tokens"] = model.max_tokens
    if model.top_p is not None:
        out["top_p"] = model.top_p
    if model.reasoning_effort is not None:
        out["thinking"] = model.reasoning_effort
    if timeout is not None:
        out["timeout"] = timeout
    if max_retries is not None and kind is not ProviderType.TEST:
        out["max_retries"] = max_retries
    return out


def override_settings(override: str) -> ModelSettings:
    """`test` or `provider/name` as model settings; the name may hold more slashes
    (`openrouter/anthropic/claude-sonnet-4-5`)."""
    if override == "test":
        return ModelSettings(provider="test")
    parts = split_model_string(override)
    if parts is None:
        raise ConfigurationError(
            f"{override!r} is not a model",
            hint="use `test` or `provider/name`, e.g. openai/gpt-4o-mini, "
            "google/gemini-2.5-flash, groq/llama-3.3-70b-versatile",
        )
    return ModelSettings(provider=parts[0], name=parts[1])


def effective_settings(
    own: ModelSettings | None, override: str | Model | None
) -> ModelSettings | None:
    """A definition's model after the run's `--model` override (None: no model at all;
    an override given as a model object has no settings: the definition's are returned).
    The definition's sampling settings stay; its endpoint, key and API version stay only
    when the override names the same provider: they were written for that provider, and
    another one takes its own (environment, config.yaml)."""
    if not isinstance(override, str):
        return own
    chosen = override_settings(override)
    if own is None or chosen.provider == "test":
        return chosen
    update: dict[str, Any] = {"provider": chosen.provider, "name": chosen.name}
    if not same_provider(own.provider, chosen.provider):
        update.update(endpoint=None, api_key=None, api_version=None)
    if not same_provider(own.provider, chosen.provider) or own.name != chosen.name:
        update["cost"] = None  # the definition's prices are its own model's
    return own.model_copy(update=update)


def same_provider(one: str, other: str) -> bool:
    """Whether two provider names mean one provider (an alias is its type: `azure` is
    `azure_openai`); a config.yaml entry's name is only itself."""
    return _canonical(one) == _canonical(other)


def _canonical(name: str) -> str:
    kind = ProviderType.lookup(name)
    return kind.value if kind is not None else name
