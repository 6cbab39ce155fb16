"""The shipped HoloDeck's retrieval options on `hierarchical_document` tools: what each
means here, and the warnings for those that have no effect as written. A reranker
written as `provider/name` is read by the model itself (`models.model_settings`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from holodeck.spec.diagnostics import FieldPath


def retrieval_warnings(tool: Any) -> Iterator[tuple[FieldPath, str]]:
    """(field, why it has no effect) for each retrieval option of a `hierarchical_document`
    tool that changes nothing as written."""
    given = tool.model_fields_set
    if tool.extract_cross_references:
        yield (
            ("extract_cross_references",),
            "`extract_cross_references` has no effect: the shipped HoloDeck never extracted "
            "cross-references either (its chunker left them empty); remove it",
        )
    if tool.context_model is not None and not tool.contextual_embeddings:
        yield (
            ("context_model",),
            "`context_model` has no effect: it writes chunk contexts only with "
            "`contextual_embeddings: true` (as in the shipped HoloDeck); set that, or remove "
            "`context_model`",
        )
    for key in ("context_max_tokens", "context_concurrency"):
        if key in given and (tool.context_model is None or not tool.contextual_embeddings):
            yield (
                (key,),
                f"`{key}` has no effect: no context model writes chunk contexts (add "
                "`context_model` with `contextual_embeddings: true`, or remove it)",
            )
    if "max_subsection_depth" in given and tool.document_domain == "none":
        yield (
            ("max_subsection_depth",),
            "`max_subsection_depth` has no effect without a `document_domain`; set one, or "
            "remove it",
        )
    if not tool.enable_reranking:
        for key in ("reranker_model", "rerank_candidates"):
            if key in given:
                yield (
                    (key,),
                    f"`{key}` has no effect: reranking is off (add `enable_reranking: true`, "
                    "or remove it)",
                )
