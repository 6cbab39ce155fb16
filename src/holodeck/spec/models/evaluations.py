"""Evaluation metrics (agent.yaml `evaluations:` and per-test-case overrides).

Several spellings are accepted so agent.yaml files written for earlier HoloDeck
releases run unchanged: a bare name (`bleu`, `faithfulness`), `{metric: bleu}`,
`{type: standard, metric: bleu}`, `{type: geval, ...}`, `{type: rag, metric_type: ...}`
and `{type: code, ...}`, with the earlier releases' options (`response_path`,
`absolute_tolerance`, `relative_tolerance`, `accept_percent`, ...; see
docs/compatibility.md).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from holodeck.spec.diagnostics import did_you_mean
from holodeck.spec.models.base import NonEmpty, Strict
from holodeck.spec.models.model_settings import ModelSettings, split_model_string

AI_METRICS = ("groundedness", "relevance", "coherence", "fluency", "similarity")
NLP_METRICS = (
    "f1_score",
    "bleu",
    "rouge",
    "rouge1",
    "rouge2",
    "rougeL",
    "exact_match",
    "equality",
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
# judged over a whole conversation (a simulated user's, or a case's turns), scored 0-1
CONVERSATION_METRICS = (
    "goal_completion",
    "knowledge_retention",
    "role_adherence",
    "conversation_completeness",
    "turn_relevancy",
)
METRIC_ALIASES = {"f1": "f1_score", "rouge_l": "rougeL", "rouge_1": "rouge1", "rouge_2": "rouge2"}
STANDARD_METRICS = AI_METRICS + NLP_METRICS
# scores are 0 or 1: without a threshold they pass only on 1
CHECKS = ("exact_match", "equality", "contains", "regex", "numeric")
# Names earlier releases offered that cannot work here, with what to write instead.
REFUSED_METRICS = {
    "meteor": "METEOR needs the WordNet corpus, which is not available offline; "
    "use `rouge` or `bleu`",
    "safety": "write `{type: geval, name: Safety, criteria: ...}` with your safety criteria",
}
# `response_path`: keys and list indices, e.g. `answer`, `result.items[0].score`.
_PATH_SEGMENT = r"[A-Za-z_][\w-]*(?:\[\d+\])*"
RESPONSE_PATH = re.compile(rf"^{_PATH_SEGMENT}(?:\.{_PATH_SEGMENT})*$")
EQUALITY_FLAGS = ("case_insensitive", "strip_whitespace", "strip_punctuation")
NUMERIC_OPTIONS = (
    "tolerance",
    "absolute_tolerance",
    "relative_tolerance",
    "accept_percent",
    "accept_thousands_separators",
)
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
    absolute_tolerance: Annotated[float, Field(ge=0)] | None = Field(
        default=None, description="For `numeric`: the same as `tolerance`."
    )
    relative_tolerance: Annotated[float, Field(ge=0)] | None = Field(
        default=None,
        description="For `numeric`: also pass when the difference is at most this fraction "
        "of the expected number.",
    )
    accept_percent: bool = Field(
        default=False, description="For `numeric`: `35%` reads as 0.35 (on both sides)."
    )
    accept_thousands_separators: bool = Field(
        default=False,
        description="For `numeric`: `_` and non-breaking spaces group digits too "
        "(commas always do).",
    )
    case_insensitive: bool = Field(default=False, description="For `equality`: ignore case.")
    strip_whitespace: bool = Field(
        default=False, description="For `equality`: trim, and collapse runs of whitespace."
    )
    strip_punctuation: bool = Field(
        default=False, description="For `equality`: remove ASCII punctuation first."
    )
    response_path: NonEmpty | None = Field(
        default=None,
        description="Score one field of a JSON answer, e.g. `answer` or `result.items[0]`.",
    )
    scale: Annotated[int, Field(gt=0)] | None = Field(
        default=None,
        description="For the AI metrics: 5 reports the 1-5 judgement divided by 5 (0-1).",
    )
    retry_on_failure: Annotated[int, Field(ge=0, le=3)] | None = None
    timeout_ms: Annotated[int, Field(gt=0)] | None = None
    custom_prompt: NonEmpty | None = None

    @model_validator(mode="before")
    @classmethod
    def _checks_pass_or_fail(cls, data: Any) -> Any:
        """A 0-or-1 check passes only on 1 unless it has a threshold, as in earlier
        releases (where `equality` and `numeric` failed a case without one)."""
        if isinstance(data, dict) and "threshold" not in data and data.get("metric") in CHECKS:
            return {**data, "threshold": 1.0}
        return data

    @field_validator("metric")
    @classmethod
    def _known(cls, value: str) -> str:
        return standard_name(value)

    @field_validator("response_path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None and not RESPONSE_PATH.match(value):
            raise ValueError(
                f"`response_path` `{value}` is not a path: write keys joined by `.`, with "
                "list indices in brackets, e.g. `answer` or `result.items[0].score`"
            )
        return value

    @model_validator(mode="after")
    def _options_fit(self) -> StandardMetric:
        """An option another metric reads would be silently ignored here: refuse it."""
        given = self.model_fields_set
        for names, owner in ((EQUALITY_FLAGS, "equality"), (NUMERIC_OPTIONS, "numeric")):
            stray = [n for n in names if n in given and self.metric != owner]
            if stray:
                raise ValueError(
                    f"`{stray[0]}` applies to `metric: {owner}`, not `{self.metric}`; "
                    f"remove it or use `metric: {owner}`"
                )
        if "scale" in given and self.metric not in AI_METRICS:
            raise ValueError(
                f"`scale` applies to the AI-judged metrics ({', '.join(AI_METRICS)}); "
                f"`{self.metric}` always scores 0-1: remove `scale`"
            )
        if self.scale is not None and self.scale != 5:
            raise ValueError(
                f"`scale: {self.scale}` is not offered: the AI metrics' rubrics have five "
                "levels; write `scale: 5` to get scores 0-1 (the judgement divided by 5), or "
                "leave it out to get 1-5"
            )
        self._threshold_fits_scale()
        if self.tolerance is not None and self.absolute_tolerance is not None:
            raise ValueError("give `tolerance` or `absolute_tolerance` (the same thing), not both")
        return self

    def _threshold_fits_scale(self) -> None:
        """Earlier releases scored the AI metrics 0-1; here they score 1-5 unless `scale: 5`.
        A threshold on the other scale would pass or fail everything, so it is refused."""
        if self.metric not in AI_METRICS or self.threshold is None:
            return
        if self.scale is None and self.threshold < 1:
            raise ValueError(
                f"threshold {self.threshold:g} is below the 1-5 scale of `{self.metric}`, so "
                "every answer would pass: write a threshold from 1 to 5 (e.g. 4), or add "
                "`scale: 5` to score 0-1 as earlier HoloDeck releases did"
            )
        if self.scale is not None and self.threshold > 1:
            raise ValueError(
                f"threshold {self.threshold:g} is above 1, but `scale: 5` scores "
                f"`{self.metric}` 0-1: write a threshold from 0 to 1 (e.g. 0.8), or remove "
                "`scale` to score 1-5"
            )


def standard_name(value: str) -> str:
    """The canonical name of a standard metric; a clear error for any other name."""
    value = METRIC_ALIASES.get(value, value)
    if value in STANDARD_METRICS:
        return value
    if value in REFUSED_METRICS:
        raise ValueError(f"metric `{value}` is not offered: {REFUSED_METRICS[value]}")
    raise ValueError(_unknown(value))


def _unknown(value: str) -> str:
    known = STANDARD_METRICS + RAG_METRICS + CONVERSATION_METRICS
    hint = did_you_mean(value, known + tuple(METRIC_ALIASES))
    return (
        f"unknown metric `{value}`"
        + (f" ({hint})" if hint else "")
        + "; known: "
        + ", ".join(known)
    )


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


class ConversationMetric(_MetricBase):
    """A model-judged score (0-1) of a whole conversation: whether the agent reached the
    simulated user's goal (`goal_completion`), remembered what the user said
    (`knowledge_retention`), stayed in the role its instructions give (`role_adherence`),
    answered everything the user asked for (`conversation_completeness`), and how relevant
    each answer was to its turn (`turn_relevancy`: the mean, and the worst turn)."""

    type: Literal["conversation"] = "conversation"
    metric: Literal[CONVERSATION_METRICS]  # type: ignore[valid-type]

    @field_validator("threshold")
    @classmethod
    def _unit_threshold(cls, value: float | None) -> float | None:
        if value is not None and not 0 <= value <= 1:
            raise ValueError(
                f"threshold {value:g} is off the 0-1 scale of conversation metrics: write a "
                "threshold from 0 to 1 (e.g. 0.7)"
            )
        return value


class RagMetric(_MetricBase):
    """A retrieval metric computed from the agent's retrieval context."""

    type: Literal["rag"] = "rag"
    metric_type: Literal[RAG_METRICS]  # type: ignore[valid-type]
    include_reason: bool = Field(
        default=True, description="Keep the judge's reason in the results and reports."
    )


GRADER = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")


class CodeMetric(_MetricBase):
    """A Python function returning a score (and optionally a reason): `file` + `function`
    (called with the keyword arguments it names), or `grader: "module.path:function"`
    (called with one `GraderContext`, as the shipped HoloDeck's code graders are)."""

    type: Literal["code"] = "code"
    name: NonEmpty | None = None
    file: NonEmpty | None = None
    function: NonEmpty | None = None
    grader: NonEmpty | None = Field(
        default=None,
        description="`module.path:function`, the module relative to the agent's directory "
        "(`graders.checks:exact` is graders/checks.py); the function gets a GraderContext.",
    )

    @model_validator(mode="after")
    def _one_form(self) -> CodeMetric:
        if self.grader is not None:
            if self.file is not None or self.function is not None:
                raise ValueError("give `grader` or `file` and `function`, not both")
            if not GRADER.match(self.grader):
                raise ValueError(
                    f"`grader` `{self.grader}` is not `module.path:function`, e.g. "
                    "`graders.checks:program_matches` for graders/checks.py"
                )
        elif self.file is None or self.function is None:
            raise ValueError("give `file` and `function`, or `grader: module.path:function`")
        return self

    @property
    def source(self) -> tuple[str, str]:
        """(file relative to the agent's directory, function name)."""
        if self.grader is None:
            assert self.file is not None and self.function is not None
            return self.file, self.function
        module, function = self.grader.split(":")
        return module.replace(".", "/") + ".py", function

    @property
    def label(self) -> str:
        return self.name or self.source[1]


def _metric_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        # `{metric: goal_completion, threshold: 0.7}`: a conversation metric without `type`
        implied = "conversation" if value.get("metric") in CONVERSATION_METRICS else "standard"
        kind = value.get("type", implied)
        return kind if isinstance(kind, str) else None
    return getattr(value, "type", None)


def _from_name(value: Any) -> Any:
    """A bare metric name (`- bleu`, `- faithfulness`) is that metric with its defaults."""
    if not isinstance(value, str):
        return value
    if value in RAG_METRICS:
        return {"type": "rag", "metric_type": value}
    if value in CONVERSATION_METRICS:
        return {"type": "conversation", "metric": value}
    return {"metric": standard_name(value)}


MetricName = Literal[  # type: ignore[valid-type]
    STANDARD_METRICS + RAG_METRICS + CONVERSATION_METRICS + tuple(METRIC_ALIASES)
]
_MetricForms = (
    Annotated[StandardMetric, Tag("standard")]
    | Annotated[GEvalMetric, Tag("geval")]
    | Annotated[RagMetric, Tag("rag")]
    | Annotated[CodeMetric, Tag("code")]
    | Annotated[ConversationMetric, Tag("conversation")]
)
Metric = Annotated[
    _MetricForms,
    Discriminator(_metric_kind),
    BeforeValidator(_from_name, json_schema_input_type=MetricName | _MetricForms),
]


def _a_model(text: str) -> str:
    if text != "test" and split_model_string(text) is None:
        raise ValueError(f"`{text}` is not `provider/name` (e.g. openai/gpt-4o-mini)")
    return text


class ModelMatrix(Strict):
    """Models every case runs on, in one run reported side by side."""

    models: list[Annotated[NonEmpty, AfterValidator(_a_model)]] = Field(
        min_length=2,
        description="`provider/name` models (or `test`); `holodeck test` runs each case on "
        "each. A single `--model` overrides the matrix; several replace it.",
    )

    @model_validator(mode="after")
    def _each_once(self) -> ModelMatrix:
        if len(set(self.models)) != len(self.models):
            raise ValueError("a model is listed twice: list each model once")
        return self


class EvaluationConfig(Strict):
    model: ModelSettings | None = Field(
        default=None, description="Default judge model; default: the agent's model."
    )
    user_model: ModelSettings | None = Field(
        default=None,
        description="The model that plays a test case's simulated user (`simulate:`); "
        "default: `model` (the judge), else the agent's model. Its `temperature` varies "
        "the user from one `--repeat` to the next.",
    )
    metrics: list[Metric] = Field(min_length=1)
    matrix: ModelMatrix | None = Field(
        default=None, description="Run every case on each of several models, in one run."
    )
