"""The `nlp` extra: the libraries behind `bleu` (sacrebleu) and the ROUGE metrics
(rouge-score, which brings nltk and absl-py). They are not in the base install; a run
whose metrics need them and finds them missing stops before any case, naming the extra."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING

from holodeck.errors import ConfigurationError
from holodeck.spec.models.evaluations import StandardMetric
from holodeck.testing.metrics.sample import MetricError

if TYPE_CHECKING:
    from holodeck.spec.models.agent_spec import AgentSpec
    from holodeck.spec.models.cases import TestCase
    from holodeck.spec.models.evaluations import Metric

NLP_EXTRA = "pip install 'holodeck-agents[nlp]'"
# metric -> the module that scores it
LIBRARIES = {
    "bleu": "sacrebleu",
    "rouge": "rouge_score",
    "rouge1": "rouge_score",
    "rouge2": "rouge_score",
    "rougeL": "rouge_score",
}


class NlpExtraMissing(ConfigurationError):
    """A metric's library is not installed: the message names the metric and the extra."""

    def __init__(self, metric: str, where: str | None = None) -> None:
        place = f" ({where})" if where else ""
        super().__init__(
            f"the {metric} metric{place} needs the nlp extra, which is not installed",
            hint=f"{NLP_EXTRA}, or remove the metric",
        )


def nlp_library(metric: str) -> ModuleType:
    """The module that scores `metric`, imported; a `MetricError` naming the extra when it
    cannot be (a run checks first, with `require_nlp_extra`; this covers other callers)."""
    try:
        return importlib.import_module(LIBRARIES[metric])
    except ImportError:
        raise MetricError(f"{metric} needs the nlp extra: {NLP_EXTRA}") from None


def require_nlp_extra(spec: AgentSpec, cases: Iterable[TestCase]) -> None:
    """Refuse a run whose enabled metrics need the nlp extra when it is missing: every such
    metric would otherwise be an ERROR that fails no case, and the run would pass."""
    for metric, where in _metrics(spec, cases):
        if isinstance(metric, StandardMetric) and metric.enabled and metric.metric in LIBRARIES:
            try:
                importlib.import_module(LIBRARIES[metric.metric])
            except ImportError:
                raise NlpExtraMissing(metric.metric, where) from None


def _metrics(spec: AgentSpec, cases: Iterable[TestCase]) -> Iterable[tuple[Metric, str]]:
    if spec.evaluations is not None:
        for metric in spec.evaluations.metrics:
            yield metric, "evaluations"
    for index, case in enumerate(cases, start=1):
        where = f"test case {case.name or index}"
        for metric in case.evaluations or []:
            yield metric, where
        for number, turn in enumerate(case.turns or [], start=1):
            for metric in turn.evaluations or []:
                yield metric, f"{where}, turn {number}"
