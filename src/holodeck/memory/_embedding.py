"""The embedding model that ranks memories: chosen as a search tool's is
(`search.embeddings.choose_embedder`), or none, when memories are ranked by their words."""

from __future__ import annotations

from holodeck.llm.providers import effective_settings
from holodeck.llm.tool_context import ToolContext
from holodeck.memory._placement import DATA_DIR
from holodeck.search.embeddings import Embedder, NoEmbedder, choose_embedder
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.long_term_memory import LongTermMemory
from holodeck.spec.models.model_settings import ModelSettings


def memory_embedder(
    memory: LongTermMemory, spec: AgentSpec, context: ToolContext
) -> Embedder | None:
    """The embedder of `memory` (None: rank by words). An offline run (`--model test`)
    reaches no provider, as the search tools' do not."""
    model = effective_settings(spec.model, context.model)
    offline = model is not None and model.provider == "test"
    wanted = memory.embedding_model
    if wanted is None and spec.embedding_provider is not None:
        model, wanted = spec.embedding_provider, spec.embedding_provider.name
    if offline and wanted is None:
        return None
    choice = choose_embedder(
        wanted,
        model or ModelSettings(provider="test"),
        context.settings,
        context.env,
        dimensions=None,
        cache_dir=spec.root / DATA_DIR / "cache",
        lent=context.lent,
        outbound=context.outbound if context.uploaded else None,
    )
    if isinstance(choice, NoEmbedder):
        return None
    if offline and not choice.name.startswith("local"):
        return None
    return choice
