"""Tool definitions shared by both formats (agent.yaml `tools:` and image tools/)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, model_validator

from holodeck.spec._base import NonEmpty, PositiveFloat, Strict, ToolName
from holodeck.spec.model_settings import ModelSettings


class FunctionTool(Strict):
    """A Python function; its schema comes from type hints and the docstring, or from
    `parameters`."""

    type: Literal["function"] = "function"
    name: ToolName
    description: str | None = Field(
        default=None, description="Shown to the model; defaults to the docstring."
    )
    file: NonEmpty = Field(description="Python file, relative to the agent's directory.")
    function: NonEmpty = Field(description="Function defined in `file`.")
    timeout: PositiveFloat | None = Field(default=None, description="Seconds per call.")
    parameters: dict[NonEmpty, dict[str, Any]] | None = Field(
        default=None,
        description="JSON Schema of each argument, by name: what the model is offered "
        "instead of the schema from type hints. An argument is required unless the "
        "function gives it a default (or its schema says `required: false`).",
    )


class TypeScriptTool(Strict):
    """An exported TypeScript function, run with Node.js (images' tools/typescript)."""

    type: Literal["typescript"] = "typescript"
    name: ToolName
    description: str | None = None
    file: NonEmpty
    function: NonEmpty
    timeout: PositiveFloat | None = None


class PromptParameter(Strict):
    type: Literal["string", "number", "integer", "boolean", "array", "object"] = "string"
    description: str | None = None
    required: bool = True
    default: Any = None


class PromptTool(Strict):
    """A prompt template sent to a model; parameters are substituted with Jinja2."""

    type: Literal["prompt"] = "prompt"
    name: ToolName
    description: NonEmpty
    template: NonEmpty | None = Field(default=None, description="Inline template.")
    file: NonEmpty | None = Field(default=None, description="Template file.")
    parameters: dict[str, PromptParameter] = Field(default_factory=dict)
    model: ModelSettings | None = Field(
        default=None, description="Model for this prompt; defaults to the agent's."
    )

    @model_validator(mode="after")
    def _one_source(self) -> PromptTool:
        if (self.template is None) == (self.file is None):
            raise ValueError("give exactly one of `template` or `file`")
        return self


class DatabaseConnection(Strict):
    provider: Literal["redis", "postgres"]
    connection_string: SecretStr


class VectorstoreTool(Strict):
    """Semantic search over files (text, markdown, PDF) or records (CSV, JSON)."""

    type: Literal["vectorstore"] = "vectorstore"
    name: ToolName
    description: NonEmpty
    source: NonEmpty = Field(description="File or directory, relative to the agent.")
    vector_field: NonEmpty | list[NonEmpty] | None = Field(
        default=None, description="Field(s) embedded per record; default: all text fields."
    )
    vector_fields: list[NonEmpty] | None = Field(
        default=None, description="Several fields combined into one vector per record."
    )
    meta_fields: list[NonEmpty] | None = Field(
        default=None, description="Fields returned with results, not embedded."
    )
    meta: list[NonEmpty] | None = Field(
        default=None, description="JSON: fields outside record_path kept as metadata."
    )
    record_path: NonEmpty | None = Field(
        default=None, description="JSON: dotted path to the records array, e.g. data.items."
    )
    record_prefix: str | None = None
    meta_prefix: str | None = None
    chunk_size: Annotated[int, Field(gt=0)] | None = None
    chunk_overlap: Annotated[int, Field(ge=0)] | None = None
    embedding_model: NonEmpty | None = None
    database: NonEmpty | DatabaseConnection | None = Field(
        default=None,
        description="A vectorstore named in config.yaml, or a connection; default embedded.",
    )
    top_k: Annotated[int, Field(ge=1, le=100)] = 5
    min_similarity_score: Annotated[float, Field(ge=0.0, le=1.0)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> VectorstoreTool:
        if self.vector_field is not None and self.vector_fields is not None:
            raise ValueError("give `vector_field` or `vector_fields`, not both")
        if (
            self.chunk_overlap is not None
            and self.chunk_size is not None
            and self.chunk_overlap >= self.chunk_size
        ):
            raise ValueError("`chunk_overlap` must be smaller than `chunk_size`")
        return self


def check_http_url(url: str) -> None:
    """MCP servers are reached over HTTP(S); `${VAR}` left unexpanded is checked later."""
    if "${" not in url and not url.startswith(("http://", "https://")):
        raise ValueError("`url` must start with http:// or https://")


class RetryPolicy(Strict):
    """How often a failed MCP call is retried, and how long to wait between tries."""

    max_retries: Annotated[int, Field(ge=0, le=20)] = 0
    backoff_base_s: Annotated[float, Field(gt=0)] = 0.5
    backoff_max_s: Annotated[float, Field(gt=0)] = 30.0
    jitter: bool = True


class McpTool(Strict):
    """An MCP server: an npm package (`server`), any stdio `command`, or a `url`."""

    type: Literal["mcp"] = "mcp"
    name: ToolName = Field(description="Server name; its tools are exposed as <name>_<tool>.")
    description: str | None = None
    server: NonEmpty | None = Field(
        default=None, description="npm package started with `npx -y`, e.g. @scope/server."
    )
    command: NonEmpty | None = Field(default=None, description="stdio server executable.")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: NonEmpty | None = Field(default=None, description="Streamable HTTP (or SSE) endpoint.")
    transport: Literal["stdio", "http", "sse"] | None = Field(
        default=None, description="Default: stdio for server/command, http for url."
    )
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    config: dict[str, Any] = Field(
        default_factory=dict, description="Server settings, e.g. allowed_directories."
    )
    tools: list[NonEmpty] | None = Field(
        default=None, description="Only these of the server's tools are exposed."
    )
    timeout: PositiveFloat | None = Field(default=None, description="Seconds per tool call.")
    startup_timeout: PositiveFloat | None = Field(
        default=None, description="Seconds to wait for the server to start."
    )
    retry: RetryPolicy | None = None
    scope: Literal["agent", "session"] = Field(
        default="agent",
        description="agent: one server serves every conversation; session: each "
        "conversation gets its own (for servers that keep state per connection).",
    )

    @model_validator(mode="before")
    @classmethod
    def _earlier_names(cls, data: Any) -> Any:
        from holodeck.spec.compat_execution import translate_mcp

        return translate_mcp(data)

    @model_validator(mode="after")
    def _one_target(self) -> McpTool:
        given = [k for k in ("server", "command", "url") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of `server`, `command` or `url`")
        if self.url is not None:
            if self.transport == "stdio":
                raise ValueError("`url` needs transport `http` or `sse`")
            check_http_url(self.url)
        elif self.transport not in (None, "stdio"):
            raise ValueError(f"transport `{self.transport}` needs a `url`")
        if self.url is None and self.headers:
            raise ValueError("`headers` apply to HTTP servers only")
        return self

    @property
    def effective_transport(self) -> str:
        return self.transport or ("http" if self.url else "stdio")


class AgentTool(Strict):
    """Another agent (an agent.yaml, an image directory or .tar.gz) called as a tool."""

    type: Literal["agent"] = "agent"
    name: ToolName
    description: str | None = None
    path: NonEmpty = Field(description="agent.yaml, image directory, or image .tar.gz.")


ToolDefinition = Annotated[
    FunctionTool | PromptTool | VectorstoreTool | McpTool | AgentTool,
    Field(discriminator="type"),
]
