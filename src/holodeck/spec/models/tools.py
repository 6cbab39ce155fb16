"""Tool definitions shared by both formats (agent.yaml `tools:` and image tools/)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from holodeck.spec.models.base import NonEmpty, PositiveFloat, Strict, ToolName
from holodeck.spec.models.model_settings import ModelSettings, reranker_settings
from holodeck.spec.models.older_forms import translate_mcp
from holodeck.spec.models.vector_databases import DatabaseConnection

# `approval: required` on a tool entry: each call waits for a person's decision
ApprovalMode = Literal["required"]
APPROVAL_HELP = "`required`: each call waits for a person to approve or deny it."


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
    approval: ApprovalMode | None = Field(default=None, description=APPROVAL_HELP)
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
    approval: ApprovalMode | None = Field(default=None, description=APPROVAL_HELP)

    @model_validator(mode="after")
    def _one_source(self) -> PromptTool:
        if (self.template is None) == (self.file is None):
            raise ValueError("give exactly one of `template` or `file`")
        return self


SearchMode = Literal["semantic", "keyword", "hybrid"]


class VectorstoreTool(Strict):
    """Search over files (text, markdown, PDF) or records (CSV, JSON, JSON lines)."""

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
        default=None,
        description="Fields returned with results, not embedded; default: every field "
        "that is not embedded.",
    )
    id_field: NonEmpty | None = Field(
        default=None, description="Field naming each record; default: its row number."
    )
    field_separator: str = Field(default="\n", description="Joins the vector fields of one record.")
    meta: list[NonEmpty] | None = Field(
        default=None, description="JSON: fields outside record_path kept as metadata."
    )
    record_path: NonEmpty | None = Field(
        default=None, description="JSON: dotted path to the records array, e.g. data.items."
    )
    record_prefix: str | None = Field(
        default=None, description="JSON: prefix of the records' own field names."
    )
    meta_prefix: str | None = Field(default=None, description="JSON: prefix of `meta` names.")
    chunk_size: Annotated[int, Field(gt=0)] | None = Field(
        default=None, description="Tokens per chunk (default 512)."
    )
    chunk_overlap: Annotated[int, Field(ge=0)] | None = Field(
        default=None, description="Tokens repeated between chunks (default 64)."
    )
    embedding_model: NonEmpty | None = Field(
        default=None,
        description="provider/name, or all-MiniLM-L6-v2 (local); default: the agent's "
        "provider's standard embedding model.",
    )
    embedding_dimensions: Annotated[int, Field(gt=0, le=10000)] | None = Field(
        default=None, description="Vector size, for models that offer several."
    )
    database: NonEmpty | DatabaseConnection | None = Field(
        default=None,
        description="A vectorstore named in config.yaml, or a connection; default embedded.",
    )
    search_mode: SearchMode = Field(
        default="semantic",
        description="semantic (vectors), keyword (BM25) or hybrid (both, fused by rank).",
    )
    top_k: Annotated[int, Field(ge=1, le=100)] = 5
    min_similarity_score: Annotated[float, Field(ge=0.0, le=1.0)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> VectorstoreTool:
        if self.vector_field is not None and self.vector_fields is not None:
            raise ValueError("give `vector_field` or `vector_fields`, not both")
        if self.chunk_overlap is not None and self.chunk_overlap >= (
            self.chunk_size or DEFAULT_CHUNK_SIZE
        ):
            raise ValueError("`chunk_overlap` must be smaller than `chunk_size`")
        return self

    @property
    def fields_embedded(self) -> list[str] | None:
        """`vector_field` (one or a list) or `vector_fields`; None: every text field."""
        if self.vector_fields is not None:
            return list(self.vector_fields)
        if isinstance(self.vector_field, str):
            return [self.vector_field]
        return self.vector_field


DEFAULT_CHUNK_SIZE = 512
DEFAULT_CHUNK_OVERLAP = 64

# Options of the shipped HoloDeck's document tool that this runtime does not offer: each
# is refused with this reason rather than accepted and ignored.
_NOT_OFFERED = {
    "keyword_index": "external keyword indexes (keywords are indexed in the vector store)",
    "defer_loading": "deferred tool loading",
}
# `keyword_index: {provider: in-memory}` is what the tool's own store does: accepted.
_OWN_KEYWORD_INDEX = {"provider": "in-memory"}

DocumentDomain = Literal[
    "none", "us_legislative", "au_legislative", "academic", "technical", "legal_contract"
]


class HierarchicalDocumentTool(Strict):
    """Structure-aware search over markdown and PDF: chunks follow the headings, and each
    result carries its heading path."""

    type: Literal["hierarchical_document"] = "hierarchical_document"
    name: ToolName
    description: NonEmpty
    source: NonEmpty = Field(description="File or directory, relative to the agent.")
    chunking_strategy: Literal["structure", "token"] = Field(
        default="structure",
        description="structure: split by headings first; token: fixed-size chunks only.",
    )
    max_chunk_tokens: Annotated[int, Field(ge=20, le=8000)] = 800
    chunk_overlap: Annotated[int, Field(ge=0)] = 50
    search_mode: Literal["semantic", "keyword", "exact", "hybrid"] = "hybrid"
    top_k: Annotated[int, Field(ge=1, le=100)] = 10
    min_score: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    semantic_weight: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5
    keyword_weight: Annotated[float, Field(ge=0.0, le=1.0)] = 0.3
    exact_weight: Annotated[float, Field(ge=0.0, le=1.0)] = 0.2
    rrf_k: Annotated[int, Field(ge=1)] = Field(
        default=60, description="Reciprocal rank fusion constant (hybrid)."
    )
    contextual_embeddings: bool = Field(
        default=True, description="Embed each chunk with its heading path in front."
    )
    embedding_model: NonEmpty | None = None
    embedding_dimensions: Annotated[int, Field(gt=0, le=10000)] | None = None
    database: NonEmpty | DatabaseConnection | None = None
    document_domain: DocumentDomain = Field(
        default="none",
        description="Numbered lines that act as headings in this kind of document "
        "(`SEC. 3`, `(a)`, `Article I`, `Step 2`, `1.1`) start sections of their own.",
    )
    max_subsection_depth: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description="Only the first N levels of the domain's numbering start sections.",
    )
    extract_definitions: bool = Field(
        default=False,
        description='Each definition (`"Term" means ...`) is also stored as an entry of '
        "its own, found by the term it defines.",
    )
    extract_cross_references: bool = Field(
        default=False,
        description="Accepted from the shipped HoloDeck, which never extracted any: no "
        "effect (a warning says so).",
    )
    context_model: ModelSettings | None = Field(
        default=None,
        description="With `contextual_embeddings`, this model writes a line situating each "
        "chunk in its document; the line is embedded and indexed with the chunk.",
    )
    context_max_tokens: Annotated[int, Field(ge=10, le=1000)] = Field(
        default=100, description="Most tokens of each context line `context_model` writes."
    )
    context_concurrency: Annotated[int, Field(ge=1, le=50)] = Field(
        default=10, description="Context lines requested at once."
    )
    enable_reranking: bool = Field(
        default=False,
        description="A model reorders the first `rerank_candidates` results; the best "
        "`top_k` are returned.",
    )
    reranker_model: ModelSettings | NonEmpty | None = Field(
        default=None,
        description="The reranking model (a model block or `provider/name`); default: the "
        "agent's model.",
    )
    rerank_candidates: Annotated[int, Field(ge=1, le=100)] | None = Field(
        default=None,
        description="Results the reranker reads (default: three times `top_k`, at least 20, "
        "at most 100).",
    )

    @model_validator(mode="before")
    @classmethod
    def _not_offered(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("keyword_index") == _OWN_KEYWORD_INDEX:
            data = {k: v for k, v in data.items() if k != "keyword_index"}
        if isinstance(data, dict):
            for key, what in _NOT_OFFERED.items():
                if key in data:
                    fix = (
                        "remove it, or write `keyword_index: {provider: in-memory}`"
                        if key == "keyword_index"
                        else "remove it"
                    )
                    raise ValueError(f"`{key}` is not supported: this runtime has no {what}; {fix}")
        return data

    @model_validator(mode="after")
    def _consistent(self) -> HierarchicalDocumentTool:
        if self.chunk_overlap >= self.max_chunk_tokens:
            raise ValueError("`chunk_overlap` must be smaller than `max_chunk_tokens`")
        if self.search_mode == "hybrid":
            total = self.semantic_weight + self.keyword_weight + self.exact_weight
            if abs(total - 1.0) > 1e-6:
                raise ValueError(
                    f"hybrid weights must add up to 1 (semantic_weight + keyword_weight "
                    f"+ exact_weight = {total:g})"
                )
        if self.rerank_candidates is not None and self.rerank_candidates < self.top_k:
            raise ValueError(
                f"`rerank_candidates` ({self.rerank_candidates}) must be at least `top_k` "
                f"({self.top_k}): the reranker picks the best `top_k` of the candidates"
            )
        return self

    @field_validator("reranker_model", mode="before")
    @classmethod
    def _reranker_string(cls, value: Any) -> Any:

        return reranker_settings(value) if isinstance(value, str) else value

    @property
    def candidates(self) -> int:
        """First-stage results the reranker reads."""
        if self.rerank_candidates is not None:
            return self.rerank_candidates
        return min(100, max(self.top_k * 3, 20))


SearchTool = VectorstoreTool | HierarchicalDocumentTool


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
    approval: ApprovalMode | None = Field(
        default=None, description=APPROVAL_HELP + " (each of the server's tools)"
    )

    @model_validator(mode="before")
    @classmethod
    def _earlier_names(cls, data: Any) -> Any:

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
    approval: ApprovalMode | None = Field(default=None, description=APPROVAL_HELP)


class A2ATool(Strict):
    """A remote agent spoken to over A2A (Agent2Agent), called as a tool: the model writes
    a `message`; the remote agent's answer is the result."""

    type: Literal["a2a"] = "a2a"
    name: ToolName
    description: str | None = Field(
        default=None, description="Shown to the model; default: the remote agent's card's."
    )
    url: NonEmpty = Field(
        description="The agent's card (…/.well-known/agent-card.json) or the base URL it is "
        "under; reached through the agent's outbound `network` policy."
    )
    headers: dict[str, SecretStr] = Field(
        default_factory=dict,
        description="Sent with every request, e.g. `Authorization: Bearer ${REMOTE_KEY}`.",
    )
    timeout: PositiveFloat = Field(
        default=300.0, description="Seconds to wait for the remote agent's answer."
    )

    @model_validator(mode="after")
    def _http(self) -> A2ATool:
        check_http_url(self.url)
        return self


ToolDefinition = Annotated[
    FunctionTool
    | PromptTool
    | VectorstoreTool
    | HierarchicalDocumentTool
    | McpTool
    | AgentTool
    | A2ATool,
    Field(discriminator="type"),
]
