"""Operational settings shared by agent.yaml and config.yaml (memory, logging,
deployment), and the schema of config.yaml itself (`Settings`: providers, vector stores)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AliasChoices,
    BaseModel,
    Discriminator,
    Field,
    SecretStr,
    Tag,
    field_validator,
    model_validator,
)

from holodeck.spec.models.base import NonEmpty, Strict
from holodeck.spec.models.compaction import CompactionSettings
from holodeck.spec.models.container_settings import CloudTarget, ImageRegistry
from holodeck.spec.models.controls import Limits
from holodeck.spec.models.guardrails import Guardrails
from holodeck.spec.models.long_term_memory import LongTermMemory
from holodeck.spec.models.model_settings import PROVIDER_ALIASES, ProviderType
from holodeck.spec.models.network_settings import NetworkSettings
from holodeck.spec.models.observability_settings import ObservabilitySettings
from holodeck.spec.models.older_forms import (
    drop_auth_provider,
    refuse_container_deployment,
    translate_execution,
)
from holodeck.spec.models.vector_databases import DatabaseConnection

M = TypeVar("M", bound=BaseModel)


def overlay(base: M | None, top: M | None) -> M | None:
    """`top`'s fields over `base`'s, field by field: only what `top` sets replaces."""
    if base is None or top is None:
        return top or base
    return type(base).model_validate(
        {**base.model_dump(exclude_unset=True), **top.model_dump(exclude_unset=True)}
    )


class MemorySettings(Strict):
    """Conversation memory for chat and the HTTP service."""

    max_messages: Annotated[int, Field(ge=1)] = Field(
        default=20,
        description="Messages kept; the oldest are dropped first (not with `compaction`, "
        "which summarises them instead).",
    )
    store: Literal["memory", "sqlite", "redis", "postgres"] = Field(
        default="memory", description="Where sessions live when the agent is served."
    )
    url: SecretStr | None = Field(
        default=None,
        description="Connection URL of a redis or postgres store; for sqlite the database "
        "file (default .holodeck/sessions.db beside the agent).",
    )
    ttl_seconds: Annotated[int, Field(ge=1)] | None = Field(
        default=86400,
        description="A served session not used for this long is forgotten; null keeps "
        "sessions until they are deleted.",
    )
    long_term: LongTermMemory | None = Field(
        default=None,
        description="Facts kept across sessions, per user, agent or session (docs/memory.md).",
    )
    compaction: CompactionSettings | None = Field(
        default=None,
        description="Summarise a conversation's older turns by a model call when the history "
        "nears the model's context window, instead of dropping them (docs/memory.md).",
    )

    @model_validator(mode="after")
    def _one_way_to_forget(self) -> MemorySettings:
        # both would decide what an old turn becomes: dropped, or summarised
        compacts = self.compaction is not None and self.compaction.enabled
        if compacts and "max_messages" in self.model_fields_set:
            raise ValueError(
                "`max_messages` drops old messages and `compaction` summarises them: keep one "
                "(with compaction, the history is bounded by the model's context window)"
            )
        return self

    @model_validator(mode="after")
    def _url_for_servers(self) -> MemorySettings:
        if self.store in ("redis", "postgres") and self.url is None:
            raise ValueError(f"store `{self.store}` needs a `url`")
        if self.store == "memory" and self.url is not None:
            raise ValueError("store `memory` takes no `url`")
        url = self.url.get_secret_value() if self.url is not None else ""
        schemes = {
            "redis": ("redis://", "rediss://", "unix://"),
            "postgres": ("postgres://", "postgresql://"),
        }
        # a `${VAR}` left as written (a definition read to ship it) is checked where it runs
        written_as_reference = url.startswith("${")
        if (
            self.store in schemes
            and not url.startswith(schemes[self.store])
            and not written_as_reference
        ):
            raise ValueError(
                f"the `url` of a {self.store} store starts with "
                + " or ".join(f"`{s}`" for s in schemes[self.store])
            )
        return self


def overlay_memory(
    base: MemorySettings | None, top: MemorySettings | None
) -> MemorySettings | None:
    """`overlay` for memory blocks: a `store` that `top` names brings its own `url`."""
    if base is not None and top is not None and "store" in top.model_fields_set:
        kept = base.model_dump(exclude_unset=True, exclude={"store", "url"})
        base = MemorySettings.model_validate(kept)
    return overlay(base, top)


class LoggingSettings(Strict):
    """Request logs of a served agent (~/.holodeck/logs/agent-<name>.log)."""

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO",
        description="INFO logs every request, WARNING only refused ones (4xx) and failures, "
        "ERROR only failures; DEBUG adds each tool call's arguments and result.",
    )
    rotation_days: Annotated[int, Field(ge=1)] = Field(
        default=1, description="Days one log file covers before a new one starts."
    )
    retention_days: Annotated[int, Field(ge=1)] = Field(
        default=7, description="Days old log files are kept."
    )
    redact_content: bool = Field(
        default=False,
        description="Log messages, answers and tool arguments as their length only, and a "
        "failing tool's error as its exception type.",
    )

    @model_validator(mode="after")
    def _keeps_a_file(self) -> LoggingSettings:
        if self.retention_days < self.rotation_days:
            raise ValueError("`retention_days` must be at least `rotation_days`")
        return self


class RateLimit(Strict):
    """Requests each API key (or, without keys, each client address) may make."""

    requests_per_minute: Annotated[int, Field(ge=1)]


KeyName = Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")]


class NamedKey(Strict):
    """An API key with the name request logs and session ownership know it by."""

    name: KeyName = Field(description="Letters, digits and `._-`; the key itself is never logged.")
    key: SecretStr = Field(description="The bearer token clients send.")


def _key_form(value: Any) -> str:
    return "named" if isinstance(value, dict | NamedKey) else "plain"


# one form or the other, so a mistake in either is reported against that form only
ApiKey = Annotated[
    Annotated[NamedKey, Tag("named")] | Annotated[SecretStr, Tag("plain")],
    Discriminator(_key_form),
]


class AuthSettings(Strict):
    """`api_key`: every request but /health, /ready and the chat page carries
    `Authorization: Bearer <one of api_keys>`. Each key owns the sessions it starts."""

    type: Literal["none", "api_key"] = "none"
    api_keys: list[ApiKey] = Field(
        default_factory=list,
        description="Keys: `{name, key}`, or a bare key (named `key-` and 8 hex digits of "
        "its SHA-256).",
    )

    @model_validator(mode="after")
    def _keys(self) -> AuthSettings:
        if self.type == "api_key" and not self.api_keys:
            raise ValueError("auth type `api_key` needs at least one entry in `api_keys`")
        names = [k.name for k in self.api_keys if isinstance(k, NamedKey)]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"api_keys: the name {twice[0]!r} is given to several keys")
        secrets = [
            (k.key if isinstance(k, NamedKey) else k).get_secret_value() for k in self.api_keys
        ]
        if len(set(secrets)) != len(secrets):
            raise ValueError("api_keys: the same key is listed twice")
        return self


class UploadSettings(Strict):
    """What agents uploaded over POST /v1/agents may take and use."""

    providers: list[NonEmpty] = Field(
        default_factory=list,
        description="Provider entries (config.yaml `providers:` names, or built-in types "
        "such as openai) whose credentials this server lends to uploaded agents, at the "
        "entry's own endpoint only. Others get no key of the server's.",
    )
    max_unpacked_mib: Annotated[int, Field(ge=1)] = Field(
        default=64,
        description="Most an uploaded image may take once unpacked, in MiB; checked while "
        "unpacking (413 beyond it).",
    )
    max_files: Annotated[int, Field(ge=1)] = Field(
        default=2000, description="Most files and folders an uploaded image may hold."
    )
    max_store_mib: Annotated[int, Field(ge=1)] = Field(
        default=1024,
        description="Most all uploaded agents together (archives and unpacked images) may "
        "take on disk, in MiB; an upload past it is refused (413).",
    )


class DeploymentSettings(Strict):
    """Defaults for `holodeck deploy`; command-line flags override them."""

    host: NonEmpty = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535)] = Field(
        default=8000, validation_alias=AliasChoices("port", "default_port")
    )
    workers: Annotated[int, Field(ge=1, le=64)] = Field(
        default=1, description="Server processes; more than one needs a shared session store."
    )
    rate_limit: RateLimit | None = None
    auth: AuthSettings | None = None
    cors_origins: list[NonEmpty] = Field(
        default_factory=list, description="Origins browsers may call the API from (`*`: any)."
    )
    max_request_bytes: Annotated[int, Field(ge=1024)] = Field(
        default=16 * 1024 * 1024, description="Larger request bodies are refused (413)."
    )
    max_concurrent_turns: Annotated[int, Field(ge=1)] = Field(
        default=64, description="Turns one process runs at once."
    )
    harness_tools: list[Literal["bash", "files"]] = Field(
        default_factory=list,
        description="The Claude harness's shell (`bash`) and file tools (`files`) a served "
        "agent may use; off unless listed (docs/harnesses.md).",
    )
    max_queued_turns: Annotated[int, Field(ge=0)] = Field(
        default=256,
        description="Turns waiting for a free slot; beyond them requests get 503.",
    )
    shutdown_grace_seconds: Annotated[float, Field(ge=0)] = Field(
        default=30.0, description="How long turns in progress may finish after SIGTERM."
    )
    max_queued_turns_per_session: Annotated[int, Field(ge=0)] = Field(
        default=8,
        description="Turns of one session waiting for its running turn; beyond them 429.",
    )
    allow_uploads: bool = Field(
        default=False,
        description="Accept agent images over POST /v1/agents. Their tools run on this "
        "server with its rights: enable it only behind API keys you trust.",
    )
    uploads: UploadSettings = Field(default_factory=UploadSettings)
    registry: ImageRegistry | None = Field(
        default=None, description="`holodeck deploy --build`: the image's default name."
    )
    platform: NonEmpty | None = Field(
        default=None, description="`--build`: the platform to build for (linux/arm64)."
    )
    environment: dict[NonEmpty, str] = Field(
        default_factory=dict,
        description="`--emit`: plain variables the manifests set in the container "
        "(`${VAR}` values are left to the container's environment).",
    )
    target: CloudTarget | None = Field(
        default=None,
        description="The shipped HoloDeck's cloud: not deployed to here; its cpu, memory "
        "and replicas size `--emit kubernetes`.",
    )

    @model_validator(mode="before")
    @classmethod
    def _not_a_container_form(cls, data: Any) -> Any:

        return refuse_container_deployment(data)


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
    parallel_test_cases: Annotated[int, Field(ge=1, le=256)] | None = Field(
        default=None,
        description="Test cases `holodeck test` runs at once (default 8); --concurrency wins.",
    )
    download_timeout: Annotated[float, Field(gt=0)] | None = Field(
        default=None, description="Seconds one test case file download may take (default 60)."
    )
    file_timeout: Annotated[float, Field(gt=0)] | None = Field(
        default=None,
        description="Seconds preparing one test case file may take: download and conversion "
        "to text (default: no limit beyond download_timeout).",
    )
    cache_enabled: bool | None = Field(
        default=None,
        description="Keep test case files downloaded from URLs, and use them again in later "
        "runs (default true); a file's own `cache:` wins.",
    )
    cache_dir: NonEmpty | None = Field(
        default=None,
        description="Where downloaded test case files are kept, relative to the agent's "
        "directory (default .holodeck/cache/files).",
    )
    verbose: bool | None = Field(
        default=None, description="`holodeck test` shows conversations, as with -v."
    )

    @model_validator(mode="before")
    @classmethod
    def _earlier_names(cls, data: Any) -> Any:

        return translate_execution(data)

    @model_validator(mode="after")
    def _one_cassette(self) -> ExecutionSettings:
        if self.record is not None and self.replay is not None:
            raise ValueError("give `record` or `replay`, not both")
        return self


class ProviderEntry(Strict):
    """Credentials and endpoint of a provider. The key names it; `provider` gives its
    type when the key is a custom name (e.g. `local-llama: {provider: ollama}`).

    `name`, `temperature`, `max_tokens` and `top_p` are defaults for the models that
    name this entry: agent.yaml's own `model:` values win, field by field."""

    provider: ProviderType | None = None
    api_key: SecretStr | None = None
    endpoint: NonEmpty | None = None
    api_version: NonEmpty | None = None
    name: NonEmpty | None = Field(default=None, description="Default model name.")
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    max_tokens: Annotated[int, Field(gt=0)] | None = None
    top_p: Annotated[float, Field(ge=0.0, le=1.0)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _auth_provider(cls, data: Any) -> Any:

        return drop_auth_provider(data)

    @field_validator("provider", mode="before")
    @classmethod
    def _alias(cls, value: object) -> object:
        """`provider: gemini` is `google`, as in a model string."""
        return PROVIDER_ALIASES.get(value, value) if isinstance(value, str) else value


class Settings(Strict):
    providers: dict[str, ProviderEntry] = Field(default_factory=dict)
    vectorstores: dict[str, DatabaseConnection] = Field(default_factory=dict)
    deployment: DeploymentSettings | None = None
    memory: MemorySettings | None = None
    execution: ExecutionSettings | None = None
    observability: ObservabilitySettings | None = None
    network: NetworkSettings | None = None
    limits: Limits | None = Field(
        default=None, description="Default spend caps of every agent; an agent's own win."
    )
    guardrails: Guardrails | None = Field(
        default=None,
        description="Default guardrails of every agent; an agent's own `input` or `output` "
        "list replaces the default's.",
    )

    def provider_type(self, name: str) -> ProviderType | None:
        """The type behind a provider name: a configured entry, a built-in type or alias."""
        entry = self.providers.get(name)
        if entry is not None and entry.provider is not None:
            return entry.provider
        return ProviderType.lookup(name)
