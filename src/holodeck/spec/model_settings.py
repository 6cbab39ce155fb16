"""Which model an agent talks to, and how (agent.yaml `model:`)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, model_validator

from holodeck.spec._base import NonEmpty, Strict


class ProviderType(StrEnum):
    """Provider kinds the runtime can talk to."""

    OPENAI = "openai"
    AZURE_OPENAI = "azure_openai"
    ANTHROPIC = "anthropic"
    OLLAMA = "ollama"
    OPENAI_COMPATIBLE = "openai-compatible"
    TEST = "test"


PROVIDER_TYPES = tuple(p.value for p in ProviderType)

ReasoningEffort = Literal["low", "medium", "high"]


class ModelSettings(Strict):
    """A model and its sampling settings.

    `provider` is a provider type (`openai`, `azure_openai`, `anthropic`, `ollama`,
    `openai-compatible`, `test`) or the name of a provider entry in the global or
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

    @model_validator(mode="before")
    @classmethod
    def _auth_provider(cls, data: Any) -> Any:
        from holodeck.spec.compat_model import drop_auth_provider

        return drop_auth_provider(data)

    @model_validator(mode="after")
    def _name_required(self) -> ModelSettings:
        if self.name is None and self.provider != ProviderType.TEST.value:
            raise ValueError(
                "`name` is required: which model should the provider run? (here, or as "
                "`name` of the config.yaml provider entry `provider` names)"
            )
        return self
