"""Where a search tool keeps its vectors: named in config.yaml `vectorstores:` or inline."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from holodeck.spec.models.base import NonEmpty, Strict

VectorDatabaseProvider = Literal["embedded", "postgres", "redis", "chromadb", "qdrant"]

# Spellings used by the shipped HoloDeck's samples and by the databases' own docs.
PROVIDER_ALIASES: dict[str, VectorDatabaseProvider] = {
    "in-memory": "embedded",
    "sqlite": "embedded",
    "postgresql": "postgres",
    "pgvector": "postgres",
    "redis-hashset": "redis",
    "redis-json": "redis",
    "chroma": "chromadb",
}

# What each provider reads; anything else given is a mistake worth saying.
_FIELDS: dict[str, set[str]] = {
    "embedded": {"path"},
    "postgres": {"connection_string"},
    "redis": {"connection_string"},
    "chromadb": {"url", "host", "port", "path", "api_key"},
    "qdrant": {"url", "path", "api_key"},
}


class DatabaseConnection(Strict):
    """A vector database: PostgreSQL with pgvector, Redis with search, ChromaDB, Qdrant,
    or the embedded store (the default: on disk under the project's `.holodeck/`)."""

    provider: VectorDatabaseProvider
    connection_string: SecretStr | None = Field(
        default=None, description="postgres / redis: postgresql://… or redis://…"
    )
    url: NonEmpty | None = Field(default=None, description="chromadb / qdrant server URL.")
    host: NonEmpty | None = Field(default=None, description="chromadb server host.")
    port: int | None = Field(default=None, ge=1, le=65535, description="chromadb port.")
    path: NonEmpty | None = Field(
        default=None,
        description="embedded / chromadb / qdrant: a directory for data kept on disk "
        "(relative to the agent); chromadb and qdrant then run in-process.",
    )
    api_key: SecretStr | None = Field(default=None, description="qdrant / chromadb key.")

    @field_validator("provider", mode="before")
    @classmethod
    def _alias(cls, value: Any) -> Any:
        return PROVIDER_ALIASES.get(value, value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _fits_provider(self) -> DatabaseConnection:
        given = {f for f in _FIELDS["chromadb"] | _FIELDS["postgres"] if getattr(self, f)}
        extra = sorted(given - _FIELDS[self.provider])
        if extra:
            raise ValueError(
                f"{', '.join(f'`{e}`' for e in extra)} does not apply to provider "
                f"`{self.provider}` (it reads: {', '.join(sorted(_FIELDS[self.provider]))})"
            )
        if self.provider in ("postgres", "redis") and self.connection_string is None:
            raise ValueError(f"provider `{self.provider}` needs a `connection_string`")
        if self.provider == "qdrant" and not (self.url or self.path):
            raise ValueError("provider `qdrant` needs a `url` (a server) or a `path`")
        if self.provider == "chromadb" and not (self.url or self.host or self.path):
            raise ValueError("provider `chromadb` needs a `url`, a `host` or a `path`")
        url = self.url
        if url is not None and "${" not in url and not url.startswith(("http://", "https://")):
            raise ValueError("`url` must start with http:// or https://")
        return self
