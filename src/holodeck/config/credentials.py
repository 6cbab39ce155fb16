"""Which key, endpoint and API version a model call uses.

Precedence, field by field: agent.yaml > environment variables > project
config.yaml > ~/.holodeck/config.yaml.

When agent.yaml names a custom provider entry (`provider: local-llama`), that
entry is part of what agent.yaml asked for, so its fields come before the
environment: an `OPENAI_API_KEY` meant for api.openai.com is never sent to a
self-hosted server that has its own key (or none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import SecretStr

from holodeck.errors import ConfigurationError
from holodeck.spec.model_settings import ModelSettings, ProviderType
from holodeck.spec.settings_models import Settings

# Each provider's standard variables, in the order they are tried.
ENV_VARS: dict[ProviderType, dict[str, tuple[str, ...]]] = {
    ProviderType.OPENAI: {"api_key": ("OPENAI_API_KEY",), "endpoint": ("OPENAI_BASE_URL",)},
    ProviderType.OPENAI_COMPATIBLE: {
        "api_key": ("OPENAI_API_KEY",),
        "endpoint": ("OPENAI_BASE_URL",),
    },
    ProviderType.AZURE_OPENAI: {
        "api_key": ("AZURE_OPENAI_API_KEY",),
        "endpoint": ("AZURE_OPENAI_ENDPOINT",),
        "api_version": ("OPENAI_API_VERSION",),
    },
    ProviderType.ANTHROPIC: {
        "api_key": ("ANTHROPIC_API_KEY",),
        "endpoint": ("ANTHROPIC_BASE_URL",),
    },
    # the google-genai SDK's own variables, in its order (GOOGLE_API_KEY wins over GEMINI_API_KEY)
    ProviderType.GOOGLE: {
        "api_key": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        "endpoint": ("GOOGLE_GEMINI_BASE_URL",),
    },
    # a Vertex AI express-mode key; without one, Application Default Credentials
    ProviderType.VERTEX_AI: {
        "api_key": ("GOOGLE_API_KEY",),
        "endpoint": ("GOOGLE_VERTEX_BASE_URL",),
    },
    ProviderType.OLLAMA: {"endpoint": ("OLLAMA_BASE_URL",)},
    ProviderType.TEST: {},
}

# Hosted OpenAI-compatible services: their key variables (the service's documented name
# first, then LiteLLM's or pydantic-ai's spelling) and a `<NAME>_BASE_URL` override.
HOSTED_KEY_VARS: dict[ProviderType, tuple[str, ...]] = {
    ProviderType.GROQ: ("GROQ_API_KEY",),
    ProviderType.DEEPSEEK: ("DEEPSEEK_API_KEY",),
    ProviderType.OPENROUTER: ("OPENROUTER_API_KEY",),
    ProviderType.TOGETHER_AI: ("TOGETHER_API_KEY", "TOGETHERAI_API_KEY"),
    ProviderType.FIREWORKS_AI: ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY"),
    ProviderType.XAI: ("XAI_API_KEY",),
    ProviderType.MISTRAL: ("MISTRAL_API_KEY",),
    ProviderType.CEREBRAS: ("CEREBRAS_API_KEY",),
    ProviderType.MOONSHOT: ("MOONSHOT_API_KEY", "MOONSHOTAI_API_KEY"),
    ProviderType.NEBIUS: ("NEBIUS_API_KEY",),
    ProviderType.OVHCLOUD: ("OVHCLOUD_API_KEY",),
    ProviderType.SAMBANOVA: ("SAMBANOVA_API_KEY",),
    ProviderType.DASHSCOPE: ("DASHSCOPE_API_KEY", "ALIBABA_API_KEY"),
    ProviderType.VERCEL_AI_GATEWAY: ("VERCEL_AI_GATEWAY_API_KEY",),
}
HOSTED_URL_VARS: dict[ProviderType, str] = {
    ProviderType.GROQ: "GROQ_BASE_URL",
    ProviderType.DEEPSEEK: "DEEPSEEK_BASE_URL",
    ProviderType.OPENROUTER: "OPENROUTER_BASE_URL",
    ProviderType.TOGETHER_AI: "TOGETHER_BASE_URL",
    ProviderType.FIREWORKS_AI: "FIREWORKS_BASE_URL",
    ProviderType.XAI: "XAI_BASE_URL",
    ProviderType.MISTRAL: "MISTRAL_BASE_URL",
    ProviderType.CEREBRAS: "CEREBRAS_BASE_URL",
    ProviderType.MOONSHOT: "MOONSHOT_BASE_URL",
    ProviderType.NEBIUS: "NEBIUS_BASE_URL",
    ProviderType.OVHCLOUD: "OVHCLOUD_BASE_URL",
    ProviderType.SAMBANOVA: "SAMBANOVA_BASE_URL",
    ProviderType.DASHSCOPE: "DASHSCOPE_BASE_URL",
    ProviderType.VERCEL_AI_GATEWAY: "VERCEL_AI_GATEWAY_BASE_URL",
}
for _kind, _keys in HOSTED_KEY_VARS.items():
    ENV_VARS[_kind] = {"api_key": _keys, "endpoint": (HOSTED_URL_VARS[_kind],)}


def key_variable(provider: ProviderType) -> str | None:
    """The variable a missing key for `provider` is best set in."""
    names = ENV_VARS[provider].get("api_key", ())
    return names[0] if names else None


class UnknownProviderError(ConfigurationError):
    """A model names a provider that is neither built in nor configured."""


@dataclass(frozen=True)
class ResolvedModel:
    """A model with its credentials settled; `sources` says where each came from."""

    provider: ProviderType
    name: str | None
    api_key: SecretStr | None
    endpoint: str | None
    api_version: str | None
    settings: ModelSettings
    sources: dict[str, str] = field(default_factory=dict)


def resolve_model(
    model: ModelSettings, settings: Settings, env: Mapping[str, str]
) -> ResolvedModel:
    """Settle credentials for `model`; raise `UnknownProviderError` for unknown names."""
    provider = settings.provider_type(model.provider)
    if provider is None:
        raise UnknownProviderError(f"unknown provider `{model.provider}`")
    builtin = ProviderType.lookup(model.provider)
    # `gemini/...` also finds a `providers.google` entry: an alias names the same service
    entry_name = model.provider
    if entry_name not in settings.providers and builtin is not None:
        entry_name = builtin.value
    entry = settings.providers.get(entry_name)
    sources: dict[str, str] = {}
    values: dict[str, str | None] = {}
    named_entry = entry is not None and builtin is not provider
    for name in ("api_key", "endpoint", "api_version"):
        candidates = [("agent", _text(getattr(model, name)))]
        from_env = [
            (f"environment variable {var}", env.get(var) or None)
            for var in ENV_VARS[provider].get(name, ())
        ]
        from_config = [
            (
                f"config.yaml providers.{entry_name}",
                _text(getattr(entry, name)) if entry is not None else None,
            )
        ]
        # a named entry is used as written: its type's variables (OPENAI_API_KEY, ...)
        # belong to the hosted service and must not leak to a self-hosted one
        candidates += from_config if named_entry else (from_env + from_config)
        source, value = next(((src, v) for src, v in candidates if v is not None), ("", None))
        values[name] = value
        if value is not None:
            sources[name] = source
    key = values["api_key"]
    return ResolvedModel(
        provider=provider,
        name=model.name,
        api_key=SecretStr(key) if key is not None else None,
        endpoint=values["endpoint"],
        api_version=values["api_version"],
        settings=model,
        sources=sources,
    )


def _text(value: SecretStr | str | None) -> str | None:
    return value.get_secret_value() if isinstance(value, SecretStr) else value
