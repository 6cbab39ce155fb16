"""The models a document tool's retrieval options call: `context_model` writes chunk
contexts, `reranker_model` (default: the agent's model) reorders results.

Each is built by the provider layer like the agent's own model, with the run's `--model`
override, cassette and rate limit. Under the offline `test` model no model is called:
contexts come from `TitleContextWriter` and reranking from `WordOverlapReranker`, so
`holodeck test --model test` exercises both paths deterministically."""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck.llm.prompt_calls import prompt_asker
from holodeck.llm.providers import effective_settings
from holodeck.llm.run_model import run_model
from holodeck.llm.tool_context import ToolContext
from holodeck.search.contextual import (
    Contextualizer,
    ContextWriter,
    ModelContextWriter,
    TitleContextWriter,
)
from holodeck.search.rerank import Ask, ModelReranker, Reranker, WordOverlapReranker
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.tools import HierarchicalDocumentTool

if TYPE_CHECKING:
    from pathlib import Path


def contextualizer(
    tool: HierarchicalDocumentTool, spec: AgentSpec, options: ToolContext, cache_dir: Path
) -> Contextualizer | None:
    """What writes the tool's chunk contexts; None when it has no `context_model` (or
    `contextual_embeddings` is off: the loader warned)."""
    if tool.context_model is None or not tool.contextual_embeddings:
        return None
    writer: ContextWriter
    ask = _asker(tool.context_model, spec, options, max_tokens=tool.context_max_tokens)
    if ask is None:
        writer = TitleContextWriter()
    else:
        model = effective_settings(tool.context_model, options.model)
        # another model, or another length of line, writes other lines: cached apart
        name = f"{model.provider}:{model.name}" if model is not None else "custom"
        writer = ModelContextWriter(ask, f"{name}:{tool.context_max_tokens}")
    return Contextualizer(
        writer, spec.root, cache_dir / "contexts.db", concurrency=tool.context_concurrency
    )


def reranker(
    tool: HierarchicalDocumentTool, spec: AgentSpec, options: ToolContext
) -> Reranker | None:
    """What reorders the tool's results; None when reranking is off."""
    if not tool.enable_reranking:
        return None
    own = tool.reranker_model
    assert not isinstance(own, str)  # the tool's validator read `provider/name` as a model
    ask = _asker(own or spec.model, spec, options)
    return WordOverlapReranker() if ask is None else ModelReranker(ask)


def _asker(
    own: ModelSettings | None,
    spec: AgentSpec,
    options: ToolContext,
    *,
    max_tokens: int | None = None,
) -> Ask | None:
    """A function sending one prompt to `own` (after the run's override); None for the
    offline `test` model."""
    chosen = effective_settings(own, options.model)
    if isinstance(options.model, str | None) and (chosen is None or chosen.provider == "test"):
        return None
    return prompt_asker(
        lambda: run_model(
            chosen,
            options.model,
            env=options.env,
            settings=options.settings,
            execution=spec.execution,
            cassette=options.cassette,
            rate_limit=options.rate_limit,
            lent=options.lent,
            outbound=options.outbound if options.uploaded else None,
        ),
        max_tokens=max_tokens,
    )
