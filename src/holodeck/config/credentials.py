"""Which key, endpoint and API version a model call uses.

Precedence, field by field: agent.yaml > environment variables > project
config.yaml > ~/.holodeck/config.yaml.

When agent.yaml names a custom provider entry (`provider: local-llama`), that
entry is part of what agent.yaml asked for, so its fields come before the
environment: an `OPENAI_API_KEY` meant for api.openai.com is never sent to a
self-hosted server that has its own key (or none).

An agent uploaded to a server (`lent` is not None) wrote its `model:` block itself:
the server's credentials (environment, config.yaml) reach it only for a provider entry
the server lends to uploads (`deployment.uploads.providers`), and only at that entry's
own endpoint. Elsewhere the agent has what it names and nothing of the server's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from pydantic import SecretStr

from holodeck.errors import ConfigurationError
from holodeck.spec.models.model_settings import ModelSettings, ProviderType
from holodeck.spec.models.settings import ProviderEntry, Settings

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
    # why the server's credential was kept from an uploaded agent (None: it was not)
    withheld: str | None = None


def resolve_model(
    model: ModelSettings,
    settings: Settings,
    env: Mapping[str, str],
    *,
    lent: Collection[str] | None = None,
) -> ResolvedModel:
    """Settle credentials for `model`; raise `UnknownProviderError` for unknown names.

    `lent` is None for a definition the operator wrote; for an uploaded one, the
    provider entries whose server credentials it may use (at their endpoints only)."""
    provider = settings.provider_type(model.provider)
    if provider is None:
        raise UnknownProviderError(f"unknown provider `{model.provider}`")
    builtin = ProviderType.lookup(model.provider)
    # `gemini/...` also finds a `providers.google` entry: an alias names the same service
    entry_name = model.provider
    if entry_name not in settings.providers and builtin is not None:
        entry_name = builtin.value
    entry = settings.providers.get(entry_name)
    named_entry = entry is not None and builtin is not provider
    own = {name: _text(getattr(model, name)) for name in FIELDS}
    server = _server_values(provider, entry_name, entry, named_entry, env)
    withheld = None
    if lent is not None:
        refusal = _not_lent(model.provider, entry_name, own["endpoint"], server, lent)
        if refusal is not None:
            # a credential the server would have used (Vertex AI's may be ambient: ADC)
            has_credential = "api_key" in server or provider is ProviderType.VERTEX_AI
            withheld = refusal if has_credential else None
            server = {}
    sources: dict[str, str] = {}
    values: dict[str, str | None] = {}
    for name in FIELDS:
        if own[name] is not None:
            values[name], sources[name] = own[name], "agent"
        elif name in server:
            sources[name], values[name] = server[name]
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
        withheld=withheld,
    )


FIELDS = ("api_key", "endpoint", "api_version")


def _server_values(
    provider: ProviderType,
    entry_name: str,
    entry: ProviderEntry | None,
    named_entry: bool,
    env: Mapping[str, str],
) -> dict[str, tuple[str, str]]:
    """What the environment and config.yaml give, field by field: (source, value)."""
    out: dict[str, tuple[str, str]] = {}
    for name in FIELDS:
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
        candidates = from_config if named_entry else (from_env + from_config)
        found = next(((src, v) for src, v in candidates if v is not None), None)
        if found is not None:
            out[name] = found
    return out


def _not_lent(
    written: str,
    entry_name: str,
    endpoint: str | None,
    server: Mapping[str, tuple[str, str]],
    lent: Collection[str],
) -> str | None:
    """Why an uploaded agent may not use the server's credential (None: it may)."""
    if written not in lent and entry_name not in lent:
        return (
            f"this server lends its credentials to uploaded agents only for the providers "
            f"in deployment.uploads.providers, and `{entry_name}` is not one of them"
        )
    server_endpoint = server["endpoint"][1] if "endpoint" in server else None
    if endpoint is not None and _url(endpoint) != _url(server_endpoint):
        where = server_endpoint or "the provider's own endpoint"
        return (
            f"the agent names the endpoint {endpoint}; this server lends its `{entry_name}` "
            f"credential only at {where}"
        )
    return None


def _url(value: str | None) -> str | None:
    return value.strip().rstrip("/").lower() if value is not None else None


def _text(value: SecretStr | str | None) -> str | None:
    return value.get_secret_value() if isinstance(value, SecretStr) else value
