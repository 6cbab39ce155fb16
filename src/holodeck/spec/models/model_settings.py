"""Which model an agent talks to, and how (agent.yaml `model:`)."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, model_validator

from holodeck.spec.models.base import NonEmpty, Strict
from holodeck.spec.models.older_forms import drop_auth_provider


class ProviderType(StrEnum):
    """Provider kinds the runtime can talk to.

    Names follow LiteLLM's `provider/model` prefixes, the form the Agent Image Spec
    writes models in (`google/gemini-2.5-pro`, `together_ai/...`)."""

    OPENAI = "openai"
    AZURE_OPENAI = "azure_openai"
    ANTHROPIC = "anthropic"
    GOOGLE = "google"
    VERTEX_AI = "vertex_ai"
    OLLAMA = "ollama"
    OPENAI_COMPATIBLE = "openai-compatible"
    # hosted services reached through their OpenAI-compatible APIs
    GROQ = "groq"
    DEEPSEEK = "deepseek"
    OPENROUTER = "openrouter"
    TOGETHER_AI = "together_ai"
    FIREWORKS_AI = "fireworks_ai"
    XAI = "xai"
    MISTRAL = "mistral"
    CEREBRAS = "cerebras"
    MOONSHOT = "moonshot"
    NEBIUS = "nebius"
    OVHCLOUD = "ovhcloud"
    SAMBANOVA = "sambanova"
    DASHSCOPE = "dashscope"
    VERCEL_AI_GATEWAY = "vercel_ai_gateway"
    TEST = "test"

    @classmethod
    def lookup(cls, name: str) -> ProviderType | None:
        """The type a provider name or alias means (`gemini` -> google), else None."""
        try:
            return cls(PROVIDER_ALIASES.get(name, name))
        except ValueError:
            return None


PROVIDER_TYPES = tuple(p.value for p in ProviderType)

# Other spellings of the same providers: LiteLLM's (`gemini`, `azure`, `vertex_ai_beta`)
# and pydantic-ai's (`google-gla`, `together`, `grok`), so either prefix loads.
PROVIDER_ALIASES: dict[str, str] = {
    "azure": ProviderType.AZURE_OPENAI.value,
    "gemini": ProviderType.GOOGLE.value,
    "google-gla": ProviderType.GOOGLE.value,
    "vertex": ProviderType.VERTEX_AI.value,
    "vertex_ai_beta": ProviderType.VERTEX_AI.value,
    "google-vertex": ProviderType.VERTEX_AI.value,
    "together": ProviderType.TOGETHER_AI.value,
    "fireworks": ProviderType.FIREWORKS_AI.value,
    "grok": ProviderType.XAI.value,
    "moonshotai": ProviderType.MOONSHOT.value,
    "alibaba": ProviderType.DASHSCOPE.value,
    "vercel": ProviderType.VERCEL_AI_GATEWAY.value,
}


def split_model_string(value: str) -> tuple[str, str] | None:
    """`provider/model` as (provider, model), else None. Only the first `/` splits:
    model names may hold more (`openrouter/anthropic/claude-sonnet-4-5`)."""
    provider, slash, name = value.partition("/")
    if not slash or not provider.strip() or not name.strip():
        return None
    return provider, name


# Names of local cross-encoder rerankers (sentence-transformers' `cross-encoder/...`, BAAI's
# `bge-reranker-*`, ...): none can run here, since no installable package carries their
# weights and nothing is downloaded at run time.
_LOCAL_RERANKERS = ("cross-encoder", "rerank", "ms-marco", "local", "sentence-transformers")

NO_LOCAL_RERANKER = (
    "a local cross-encoder reranker cannot run here: no installable package carries its "
    "weights, and nothing is downloaded at run time; rerank with a model through a provider "
    "(`reranker_model: {provider: openai, name: gpt-4o-mini}`, or `openai/gpt-4o-mini`), "
    "or leave `reranker_model` out to rerank with the agent's model"
)


def reranker_settings(value: str) -> dict[str, Any]:
    """`provider/name` as a model block; a local cross-encoder's name is refused."""
    parts = split_model_string(value)
    lowered = value.lower()
    if parts is None or any(word in lowered for word in _LOCAL_RERANKERS):
        raise ValueError(NO_LOCAL_RERANKER)
    return {"provider": parts[0], "name": parts[1]}


ReasoningEffort = Literal["low", "medium", "high"]

DollarsPerMillion = Annotated[Decimal, Field(ge=0, allow_inf_nan=False)]


class ModelCost(Strict):
    """What a model costs, for a model the bundled price list does not know (or to
    replace its figures): reports, usage and the cost caps use these numbers."""

    input_per_million: DollarsPerMillion = Field(description="US dollars per million input tokens.")
    output_per_million: DollarsPerMillion = Field(
        description="US dollars per million output tokens."
    )
    cached_input_per_million: DollarsPerMillion | None = Field(
        default=None,
        description="US dollars per million input tokens read from the provider's cache; "
        "default: input_per_million.",
    )


class ModelSettings(Strict):
    """A model and its sampling settings.

    `provider` is a provider type (`openai`, `azure_openai`, `anthropic`, `google`,
    `groq`, `ollama`, `openai-compatible`, `test`, ... see `ProviderType`), one of its
    aliases (`gemini`, `azure`, ...), or the name of a provider entry in the global or
    project `config.yaml`, whose credentials and endpoint are then used.
    """

    provider: NonEmpty = Field(
        description="Provider type, or the name of a provider in config.yaml.",
        examples=list(PROVIDER_TYPES),
    )
    name: NonEmpty | None = Field(
        default=None,
        description="Model name, e.g. gpt-4o or claude-sonnet-4-5; default: the `name` of "
        "the config.yaml provider entry `provider` names.",
    )
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    max_tokens: Annotated[int, Field(gt=0)] | None = Field(
        default=None, description="Upper bound on generated tokens per model call."
    )
    top_p: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    reasoning_effort: ReasoningEffort | None = None
    endpoint: NonEmpty | None = Field(
        default=None, description="Base URL (Azure resource, or any OpenAI-compatible server)."
    )
    api_key: SecretStr | None = Field(
        default=None, description="Prefer ${VAR} or config.yaml over a literal key."
    )
    api_version: NonEmpty | None = Field(default=None, description="Azure OpenAI API version.")
    cost: ModelCost | None = Field(
        default=None,
        description="Prices this model (per million tokens) for reports, usage and cost caps, "
        "instead of the price list bundled with pydantic-ai.",
    )
    context_window: Annotated[int, Field(gt=0)] | None = Field(
        default=None,
        description="Tokens the model reads at most (prompt and history); `memory.compaction` "
        "sizes the history by it. Default: the bundled price list's figure for known models.",
    )
    fallbacks: list[NonEmpty] = Field(
        default_factory=list,
        description="`provider/name` models that take over, in order, when this one fails "
        "in a way retrying cannot fix (5xx or 429 after retries, a timeout, no such model). "
        "Each uses the credentials of its provider (or the config.yaml entry it names).",
    )

    @model_validator(mode="before")
    @classmethod
    def _auth_provider(cls, data: Any) -> Any:

        return drop_auth_provider(data)

    def fallback_settings(self) -> list[ModelSettings]:
        """Each fallback as a model of its own, with this model's sampling settings."""
        shared = self.model_dump(
            include={"temperature", "max_tokens", "top_p", "reasoning_effort"}, exclude_none=True
        )
        found = []
        for text in self.fallbacks:
            provider, name = text.split("/", 1)
            found.append(ModelSettings(provider=provider, name=name, **shared))
        return found

    @model_validator(mode="after")
    def _fallbacks_are_models(self) -> ModelSettings:
        for text in self.fallbacks:
            if split_model_string(text) is None:
                raise ValueError(
                    f"fallback `{text}` is not `provider/name` (e.g. openai/gpt-4o-mini)"
                )
        return self

    @model_validator(mode="after")
    def _name_required(self) -> ModelSettings:
        if self.name is None and self.provider != ProviderType.TEST.value:
            raise ValueError(
                "`name` is required: which model should the provider run? (here, or as "
                "`name` of the config.yaml provider entry `provider` names)"
            )
        return self
