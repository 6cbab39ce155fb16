"""Evaluation metrics (agent.yaml `evaluations:` and per-test-case overrides).

Several spellings are accepted so agent.yaml files written for earlier HoloDeck
releases run unchanged: `{metric: bleu}`, `{type: standard, metric: bleu}`,
`{type: geval, ...}`, `{type: rag, metric_type: ...}` and `{type: code, ...}`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator

from holodeck.spec._base import NonEmpty, Strict
from holodeck.spec.diagnostics import did_you_mean
from holodeck.spec.model_settings import ModelSettings

AI_METRICS = ("groundedness", "relevance", "coherence", "fluency", "similarity")
NLP_METRICS = (
    "f1_score",
    "bleu",
    "rouge",
    "rouge1",
    "rouge2",
    "rougeL",
    "exact_match",
    "contains",
    "regex",
    "numeric",
)
RAG_METRICS = (
    "faithfulness",
    "answer_relevancy",
    "contextual_precision",
    "contextual_recall",
    "contextual_relevancy",
)
METRIC_ALIASES = {"f1": "f1_score", "rouge_l": "rougeL", "rouge_1": "rouge1", "rouge_2": "rouge2"}
STANDARD_METRICS = AI_METRICS + NLP_METRICS
GEVAL_PARAMS = ("input", "actual_output", "expected_output", "context", "retrieval_context")


class _MetricBase(Strict):
    threshold: float | None = Field(default=None, description="Minimum passing score.")
    model: ModelSettings | None = Field(
        default=None, description="Judge model for this metric; default: evaluations.model."
    )
    enabled: bool = True
    fail_on_error: bool = Field(
        default=False, description="Count a metric that cannot be computed as a failure."
    )


class StandardMetric(_MetricBase):
    """A built-in metric: AI-judged (1-5 scale) or NLP (0-1)."""

    type: Literal["standard"] = "standard"
    metric: str = Field(description="One of: " + ", ".join(STANDARD_METRICS))
    pattern: NonEmpty | None = Field(default=None, description="For `regex`: the expression.")
    tolerance: Annotated[float, Field(ge=0)] | None = Field(
        default=None, description="For `numeric`: allowed absolute difference."
    )
    retry_on_failure: Annotated[int, Field(ge=0, le=3)] | None = None
    timeout_ms: Annotated[int, Field(gt=0)] | None = None
    custom_prompt: NonEmpty | None = None

    @field_validator("metric")
    @classmethod
    def _known(cls, value: str) -> str:
        value = METRIC_ALIASES.get(value, value)
        if value not in STANDARD_METRICS:
            known = ", ".join(STANDARD_METRICS)
            hint = did_you_mean(value, STANDARD_METRICS + tuple(METRIC_ALIASES))
            raise ValueError(
                f"unknown metric `{value}`" + (f" ({hint})" if hint else "") + f"; known: {known}"
            )
        return value


class GEvalMetric(_MetricBase):
    """A custom criterion judged by a model, G-Eval style."""

    type: Literal["geval"] = "geval"
    name: NonEmpty
    criteria: NonEmpty
    evaluation_steps: list[NonEmpty] | None = None
    evaluation_params: list[Literal[GEVAL_PARAMS]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: ["actual_output"]
    )
    strict_mode: bool = False


class RagMetric(_MetricBase):
    """A retrieval metric computed from the agent's retrieval context."""

    type: Literal["rag"] = "rag"
    metric_type: Literal[RAG_METRICS]  # type: ignore[valid-type]


class CodeMetric(_MetricBase):
    """A Python function returning a score (and optionally a reason)."""

    type: Literal["code"] = "code"
    name: NonEmpty | None = None
    file: NonEmpty
    function: NonEmpty


def _metric_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        kind = value.get("type", "standard")
        return kind if isinstance(kind, str) else None
    return getattr(value, "type", None)


Metric = Annotated[
    Annotated[StandardMetric, Tag("standard")]
    | Annotated[GEvalMetric, Tag("geval")]
    | Annotated[RagMetric, Tag("rag")]
    | Annotated[CodeMetric, Tag("code")],
    Discriminator(_metric_kind),
]


class EvaluationConfig(Strict):
    model: ModelSettings | None = Field(
        default=None, description="Default judge model; default: the agent's model."
    )
    metrics: list[Metric] = Field(min_length=1)
