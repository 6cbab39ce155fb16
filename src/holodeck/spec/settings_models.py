"""Operational settings shared by agent.yaml and config.yaml (memory, logging,
deployment), and the schema of config.yaml itself (`Settings`: providers, vector stores)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SecretStr, model_validator

from holodeck.spec._base import NonEmpty, Strict
from holodeck.spec.model_settings import ProviderType


class MemorySettings(Strict):
    """Conversation memory for chat and the HTTP service."""

    max_messages: Annotated[int, Field(ge=1)] = Field(
        default=20, description="Messages kept; the oldest are dropped first."
    )
    store: Literal["memory", "sqlite", "redis", "postgres"] = Field(
        default="memory", description="Where sessions live when the agent is served."
    )
    url: SecretStr | None = Field(
        default=None, description="Connection URL (or file path for sqlite) of the store."
    )

    @model_validator(mode="after")
    def _url_for_servers(self) -> MemorySettings:
        if self.store in ("redis", "postgres") and self.url is None:
            raise ValueError(f"store `{self.store}` needs a `url`")
        if self.store == "memory" and self.url is not None:
            raise ValueError("store `memory` takes no `url`")
        return self


class LoggingSettings(Strict):
    """Request logs of a served agent (~/.holodeck/logs/agent-<name>.log)."""

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    rotation_days: Annotated[int, Field(ge=1)] = 1
    retention_days: Annotated[int, Field(ge=1)] = 7


class RateLimit(Strict):
    requests_per_minute: Annotated[int, Field(ge=1)]


class AuthSettings(Strict):
    type: Literal["none", "api_key"] = "none"
    api_keys: list[SecretStr] = Field(default_factory=list)

    @model_validator(mode="after")
    def _keys(self) -> AuthSettings:
        if self.type == "api_key" and not self.api_keys:
            raise ValueError("auth type `api_key` needs at least one entry in `api_keys`")
        return self


class DeploymentSettings(Strict):
    """Defaults for `holodeck deploy`; command-line flags override them."""

    host: NonEmpty = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535)] = 8000
    rate_limit: RateLimit | None = None
    auth: AuthSettings | None = None


class ExecutionSettings(Strict):
    """How turns run: limits, timeouts, retries, and recording of model exchanges."""

    max_tool_iterations: Annotated[int, Field(ge=1, le=100)] = Field(
        default=10, description="Model-and-tools rounds allowed per turn before it stops."
    )
    model_timeout: Annotated[float, Field(gt=0)] | None = Field(
        default=None, description="Seconds one model request may take."
    )
    max_retries: Annotated[int, Field(ge=0, le=10)] | None = Field(
        default=None, description="Retries (with backoff) of a rate-limited or failed request."
    )
    record: NonEmpty | None = Field(
        default=None, description="Cassette file to record every model exchange into."
    )
    replay: NonEmpty | None = Field(
        default=None, description="Cassette file to replay model exchanges from, offline."
    )

    @model_validator(mode="after")
    def _one_cassette(self) -> ExecutionSettings:
        if self.record is not None and self.replay is not None:
            raise ValueError("give `record` or `replay`, not both")
        return self


class ProviderEntry(Strict):
    """Credentials and endpoint of a provider. The key names it; `provider` gives its
    type when the key is a custom name (e.g. `local-llama: {provider: ollama}`)."""

    provider: ProviderType | None = None
    api_key: SecretStr | None = None
    endpoint: NonEmpty | None = None
    api_version: NonEmpty | None = None


class VectorstoreEntry(Strict):
    provider: Literal["redis", "postgres"]
    connection_string: SecretStr


class Settings(Strict):
    providers: dict[str, ProviderEntry] = Field(default_factory=dict)
    vectorstores: dict[str, VectorstoreEntry] = Field(default_factory=dict)
    deployment: DeploymentSettings | None = None
    memory: MemorySettings | None = None

    def provider_type(self, name: str) -> ProviderType | None:
        """The type behind a provider name: a built-in type or a configured entry."""
        entry = self.providers.get(name)
        if entry is not None and entry.provider is not None:
            return entry.provider
        try:
            return ProviderType(name)
        except ValueError:
            return None
