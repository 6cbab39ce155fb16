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


# Servers the shipped HoloDeck reached through `connection_string` (its only address
# field) that are addressed by `url` here.
_SERVER_URL = ("chromadb", "qdrant")


class DatabaseConnection(Strict):
    """A vector database: PostgreSQL with pgvector, Redis with search, ChromaDB, Qdrant,
    or the embedded store (the default: on disk under the project's `.holodeck/`).

    `connection_string` addresses every server: for chromadb and qdrant it is their
    `url` (the shipped HoloDeck's config.yaml had no other address field)."""

    provider: VectorDatabaseProvider
    connection_string: SecretStr | None = Field(
        default=None,
        description="postgres / redis: postgresql://… or redis://…; chromadb / qdrant: "
        "the server's http(s) URL (the same as `url`).",
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

    @model_validator(mode="before")
    @classmethod
    def _connection_string_as_url(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("connection_string") is None:
            return data
        provider = data.get("provider")
        provider = PROVIDER_ALIASES.get(provider, provider) if isinstance(provider, str) else None
        if provider not in _SERVER_URL:
            return data
        if data.get("url") is not None:
            raise ValueError(
                f"give `url` or `connection_string`, not both (for {provider} both are "
                "the server's address)"
            )
        value = data["connection_string"]
        if isinstance(value, str) and "${" not in value and "://" not in value:
            raise ValueError(
                f"the `connection_string` of a {provider} store is its server's URL "
                "(`http://host:port`); for data kept in a directory without a server "
                "write `path:` instead"
            )
        return {**{k: v for k, v in data.items() if k != "connection_string"}, "url": value}

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
