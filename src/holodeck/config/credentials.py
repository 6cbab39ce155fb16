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
    ProviderType.OLLAMA: {"endpoint": ("OLLAMA_BASE_URL",)},
    ProviderType.TEST: {},
}


class UnknownProviderError(ConfigurationError, ValueError):
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
    entry = settings.providers.get(model.provider)
    sources: dict[str, str] = {}
    values: dict[str, str | None] = {}
    named_entry = entry is not None and model.provider not in {p.value for p in ProviderType}
    for name in ("api_key", "endpoint", "api_version"):
        candidates = [("agent", _text(getattr(model, name)))]
        from_env = [
            (f"environment variable {var}", env.get(var) or None)
            for var in ENV_VARS[provider].get(name, ())
        ]
        from_config = [
            (
                f"config.yaml providers.{model.provider}",
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
