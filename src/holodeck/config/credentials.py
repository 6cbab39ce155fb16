"""Which key, endpoint and API version a model call uses.

Precedence, field by field: agent.yaml > environment variables > project
config.yaml > ~/.holodeck/config.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import SecretStr

from holodeck.config.settings import Settings
from holodeck.spec.model_settings import ModelSettings, ProviderType

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


class UnknownProviderError(ValueError):
    pass


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
    for name in ("api_key", "endpoint", "api_version"):
        own = getattr(model, name)
        if own is not None:
            values[name] = own.get_secret_value() if isinstance(own, SecretStr) else own
            sources[name] = "agent"
            continue
        for var in ENV_VARS[provider].get(name, ()):
            if env.get(var):
                values[name] = env[var]
                sources[name] = f"environment variable {var}"
                break
        else:
            from_config = getattr(entry, name, None) if entry is not None else None
            if from_config is not None:
                text = (
                    from_config.get_secret_value()
                    if isinstance(from_config, SecretStr)
                    else from_config
                )
                values[name] = text
                sources[name] = f"config.yaml providers.{model.provider}"
            else:
                values[name] = None
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
