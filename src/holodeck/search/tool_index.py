"""Build a search tool's index from its definition: what to read, how to embed, where
to store. `holodeck ingest` and the agent's search tools share this."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from holodeck.llm.providers import effective_settings
from holodeck.llm.tool_context import ToolContext
from holodeck.search.embeddings import NoEmbedder, choose_embedder
from holodeck.search.index import SearchIndex, SearchSettings
from holodeck.search.ingest import IngestOptions
from holodeck.search.made_by import MadeBy
from holodeck.search.retrieval_models import contextualizer, reranker
from holodeck.search.stores._protocol import StoreLocation
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.tools import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    HierarchicalDocumentTool,
    SearchTool,
)
from holodeck.spec.models.vector_databases import DatabaseConnection

if TYPE_CHECKING:
    from holodeck.search.contextual import Contextualizer
    from holodeck.search.embeddings._protocol import Embedder

DATA_DIR = Path(".holodeck")
MADE_BY_FILE = "made_by.json"


# The local model reads 256 word pieces of a text and ignores the rest: about 200 of our
# tokens (words and punctuation marks). Chunks it embeds are that long unless set.
LOCAL_WINDOW = 200


def ingest_options(tool: SearchTool, root: Path, *, window: int | None = None) -> IngestOptions:
    """What to read from the tool's source, and how to cut it. `window`: the most tokens
    the embedding model reads, the chunk size when the definition sets none."""
    if isinstance(tool, HierarchicalDocumentTool):
        size = tool.max_chunk_tokens
        overlap = tool.chunk_overlap
        if window is not None and "max_chunk_tokens" not in tool.model_fields_set:
            size = min(size, window)
            overlap = min(overlap, size // 4)
        return IngestOptions(
            source=(root / tool.source).resolve(),
            root=root.resolve(),
            chunk_size=size,
            chunk_overlap=overlap,
            structure="headings" if tool.chunking_strategy == "structure" else "plain",
            domain=tool.document_domain,
            domain_depth=tool.max_subsection_depth,
            definitions=tool.extract_definitions,
        )
    size = tool.chunk_size or min(DEFAULT_CHUNK_SIZE, window or DEFAULT_CHUNK_SIZE)
    overlap = min(DEFAULT_CHUNK_OVERLAP, size // 4)
    if tool.chunk_overlap is not None:
        overlap = min(tool.chunk_overlap, size - 1)
    fields = tool.fields_embedded
    return IngestOptions(
        source=(root / tool.source).resolve(),
        root=root.resolve(),
        vector_fields=tuple(fields) if fields is not None else None,
        meta_fields=tuple(tool.meta_fields) if tool.meta_fields is not None else None,
        id_field=tool.id_field,
        field_separator=tool.field_separator,
        record_path=tool.record_path,
        meta=tuple(tool.meta) if tool.meta is not None else None,
        record_prefix=tool.record_prefix,
        meta_prefix=tool.meta_prefix,
        chunk_size=size,
        chunk_overlap=overlap,
    )


def search_settings(tool: SearchTool) -> SearchSettings:
    if isinstance(tool, HierarchicalDocumentTool):
        return SearchSettings(
            mode=tool.search_mode,
            top_k=tool.top_k,
            min_score=tool.min_score,
            semantic_weight=tool.semantic_weight,
            keyword_weight=tool.keyword_weight,
            exact_weight=tool.exact_weight,
            rrf_k=tool.rrf_k,
            contextual=tool.contextual_embeddings,
        )
    return SearchSettings(
        mode=tool.search_mode, top_k=tool.top_k, min_score=tool.min_similarity_score
    )


def store_location(tool: SearchTool, spec: AgentSpec, options: ToolContext) -> StoreLocation:
    """The tool's `database`: a name from config.yaml `vectorstores:`, a connection, or
    (default) the embedded store under the project's `.holodeck/vectors/`."""
    database = tool.database
    if isinstance(database, str):
        assert options.settings is not None  # the loader checked the name exists
        database = options.settings.vectorstores[database]
    embedded = spec.root / DATA_DIR / "vectors"
    if database is None:
        return StoreLocation("embedded", embedded)
    return _location(database, spec.root, embedded)


def _location(db: DatabaseConnection, root: Path, embedded: Path) -> StoreLocation:
    secret = db.connection_string.get_secret_value() if db.connection_string else None
    path = (root / db.path) if db.path else None
    options = {"api_key": db.api_key.get_secret_value()} if db.api_key else {}
    if db.provider == "embedded":
        return StoreLocation("embedded", path or embedded)
    if db.provider in ("postgres", "redis"):
        return StoreLocation(db.provider, embedded, url=secret, options=options)
    url = db.url
    if url is None and db.host is not None:
        url = f"http://{db.host}:{db.port or 8000}"
    return StoreLocation(db.provider, path or embedded, url=url, options=options)


def choose_tool_embedder(
    tool: SearchTool, spec: AgentSpec, options: ToolContext
) -> tuple[Embedder | None, str | None]:
    """(embedder, None) or (None, why there is none). An offline run (`--model test`)
    embeds only with a local model: it never reaches a provider."""

    assert options.settings is not None and options.env is not None
    model = effective_settings(spec.model, options.model)
    offline = model is not None and model.provider == "test"
    if offline and tool.embedding_model is None:
        return None, "the offline `test` model embeds nothing"
    wanted = tool.embedding_model
    if wanted is None and spec.embedding_provider is not None:
        # agent.yaml's `embedding_provider`: a model block with its own credentials
        model, wanted = spec.embedding_provider, spec.embedding_provider.name
    if model is None:
        model = ModelSettings(provider="test")
    choice = choose_embedder(
        wanted,
        model,
        options.settings,
        options.env,
        dimensions=tool.embedding_dimensions,
        cache_dir=spec.root / DATA_DIR / "cache",
        lent=options.lent,
        outbound=options.outbound if options.uploaded else None,
    )
    if isinstance(choice, NoEmbedder):
        return None, choice.reason
    if offline and not choice.name.startswith("local"):
        return None, f"an offline run (the `test` model) does not call {choice.name}"
    return choice, None


def collection_name(
    tool: SearchTool, ingest: IngestOptions, context: Contextualizer | None = None
) -> str:
    """The tool's name and a digest of everything that changes the stored chunks: another
    chunk size fills a collection of its own. The index adds what made the vectors (the
    model, where it runs, their width), so another model fills one of its own too."""
    described = {k: str(v) for k, v in asdict(ingest).items() if k not in ("source", "root")}
    described["source"] = (
        ingest.source.relative_to(ingest.root).as_posix()
        if (ingest.source.is_relative_to(ingest.root))
        else str(ingest.source)
    )
    if isinstance(tool, HierarchicalDocumentTool):
        described["contextual"] = str(tool.contextual_embeddings)
        if context is not None:  # another context model stores other chunk texts
            described["context"] = context.writer.name
    digest = hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()
    return f"{tool.name}_{digest[:12]}"


def search_index(
    tool: SearchTool, spec: AgentSpec, options: ToolContext
) -> tuple[SearchIndex, str | None]:
    """The tool's index (not yet open) and, when it has no embedder, the reason."""
    embedder, missing = choose_tool_embedder(tool, spec, options)
    local = embedder is not None and embedder.name.startswith("local")
    ingest = ingest_options(tool, spec.root, window=LOCAL_WINDOW if local else None)
    dimensions = tool.embedding_dimensions if embedder is not None else None
    context = None
    if isinstance(tool, HierarchicalDocumentTool):
        context = contextualizer(tool, spec, options, spec.root / DATA_DIR / "cache")
    index = SearchIndex(
        tool.name,
        ingest,
        store_location(tool, spec, options),
        collection_name(tool, ingest, context),
        embedder,
        search_settings(tool),
        dimensions=dimensions,
        made_by=MadeBy(spec.root / DATA_DIR / "vectors" / MADE_BY_FILE),
    )
    if isinstance(tool, HierarchicalDocumentTool):
        index.contextualize = context
        index.reranker = reranker(tool, spec, options)
        index.rerank_candidates = tool.candidates
    return index, missing
