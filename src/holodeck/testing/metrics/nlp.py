"""Metrics computed from the text alone: overlap scores against the ground truth and checks.

All scores are 0..1.

- `f1_score`: SQuAD token F1. Both texts are normalised the SQuAD way (lower-cased,
  punctuation removed — ASCII punctuation as in SQuAD, plus Unicode punctuation such as
  curly quotes —, the articles a/an/the removed, whitespace collapsed), split on
  whitespace, and compared as bags of tokens. When either side normalises to nothing the
  score is 1 if both do, else 0 (as in SQuAD 2.0).
- `exact_match`: 1 when the two SQuAD-normalised texts are equal.
- `equality`: 1 when the two texts are equal as written; `case_insensitive`,
  `strip_whitespace` (trim and collapse runs) and `strip_punctuation` (ASCII) loosen it.
- `bleu` and the ROUGE metrics need the `nlp` extra (`nlp_extra`).
- `bleu`: sacrebleu's `sentence_bleu` with its defaults (13a tokenizer, exponential
  smoothing, effective order), divided by 100.
- `rouge1`, `rouge2`, `rougeL`: rouge-score's F-measure with the Porter stemmer;
  `rouge` is `rougeL`. rouge-score keeps only the ASCII letters and digits of a text, so
  other scripts score 0: prefer `f1_score` or `bleu` for them.
- `contains`: 1 when the output contains the ground truth, ignoring case and runs of
  whitespace.
- `regex`: 1 when `pattern` matches somewhere in the output (`re.search`; use `(?i)`
  to ignore case).
- `numeric`: 1 when the first number in the output is within `tolerance` (or
  `absolute_tolerance`; default 0) of the first number in the ground truth, or within
  `relative_tolerance` × |expected|. `1,234.5`, `-3`, `.5` and `2e3` are numbers; with
  `accept_percent` a number followed by `%` is divided by 100 (on both sides), and with
  `accept_thousands_separators` `_` and non-breaking spaces group digits as commas do.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from holodeck.testing.metrics.nlp_extra import nlp_library
from holodeck.testing.metrics.sample import MetricError, Outcome, Sample
from holodeck.testing.results import MetricResult

if TYPE_CHECKING:
    from holodeck.spec.models.evaluations import StandardMetric

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
ROUGE_ALIASES = {"rouge": "rougeL"}
NEEDS_GROUND_TRUTH = frozenset(
    {"f1_score", "exact_match", "equality", "bleu", "rouge", *ROUGE_TYPES, "contains", "numeric"}
)
# METEOR is not offered: NLTK's needs the WordNet corpus, which no installable package
# provides for offline use.

_ARTICLES = re.compile(r"\b(a|an|the)\b")
# an optional sign (not after a letter: ORD-1042 is 1042), digits with optional thousands
# separators and decimals, an optional exponent
_NUMBER = re.compile(
    r"(?:(?<!\w)[-+\u2212])?"
    r"(?:\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:[eE][-+]?\d+)?"
)
# with accept_thousands_separators: `_`, no-break, narrow no-break and thin spaces group too
_GROUPS = "_\u00a0\u202f\u2009"
_NUMBER_GROUPED = re.compile(
    r"(?:(?<!\w)[-+\u2212])?"
    rf"(?:\d{{1,3}}(?:[,{_GROUPS}]\d{{3}})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:[eE][-+]?\d+)?"
)
_PERCENT = re.compile(r"\s?%")


def evaluate_nlp(metric: StandardMetric, sample: Sample) -> MetricResult:
    outcome = Outcome(metric.metric, "nlp", metric.threshold, metric.fail_on_error)
    try:
        score, reason = score_nlp(metric, sample)
    except MetricError as exc:
        return outcome.error(str(exc))
    return outcome.scored(score, reason)


def score_nlp(metric: StandardMetric, sample: Sample) -> tuple[float, str | None]:
    """(score, reason) for an NLP metric; raises `MetricError` when it cannot be computed."""
    name = metric.metric
    if name in NEEDS_GROUND_TRUTH and not sample.has_ground_truth:
        raise MetricError(f"{name} needs the test case's `ground_truth`")
    output, expected = sample.output, sample.ground_truth or ""
    if name == "f1_score":
        return token_f1(output, expected), None
    if name == "exact_match":
        same = exact_match(output, expected)
        return same, None if same else "the normalised output differs from the ground truth"
    if name == "equality":
        same = equality(output, expected, metric)
        return same, None if same else "the output differs from the ground truth"
    if name == "bleu":
        return bleu(output, expected), None
    if name in ROUGE_TYPES or name in ROUGE_ALIASES:
        return rouge(output, expected, ROUGE_ALIASES.get(name, name)), None
    if name == "contains":
        found = contains(output, expected)
        return found, None if found else "the output does not contain the ground truth"
    if name == "regex":
        if metric.pattern is None:
            raise MetricError("regex needs `pattern`")
        matched = regex_match(output, metric.pattern)
        return matched, None if matched else f"no match for /{metric.pattern}/ in the output"
    if name == "numeric":
        return numeric(
            output,
            expected,
            metric.tolerance or metric.absolute_tolerance or 0.0,
            relative=metric.relative_tolerance or 0.0,
            reading=NumberReading(metric.accept_percent, metric.accept_thousands_separators),
        )
    raise MetricError(f"{name} is not an NLP metric")


# --- overlap ------------------------------------------------------------------------


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalisation; Unicode punctuation is removed too."""
    lowered = text.lower()
    kept = "".join(
        " " if ch in string.whitespace else ch
        for ch in lowered
        if ch not in _PUNCTUATION and not unicodedata.category(ch).startswith("P")
    )
    return " ".join(_ARTICLES.sub(" ", kept).split())


_PUNCTUATION = frozenset(string.punctuation)


def token_f1(prediction: str, reference: str) -> float:
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(reference).split()
    if not predicted or not expected:
        return float(predicted == expected)
    common = Counter(predicted) & Counter(expected)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(predicted)
    recall = same / len(expected)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, reference: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(reference))


def equality(prediction: str, reference: str, metric: StandardMetric) -> float:
    """Equal as written, after the normalisations the metric asks for."""

    def normal(text: str) -> str:
        if metric.case_insensitive:
            text = text.casefold()
        if metric.strip_punctuation:
            text = "".join(ch for ch in text if ch not in _PUNCTUATION)
        if metric.strip_whitespace:
            text = " ".join(text.split())
        return text

    return float(normal(prediction) == normal(reference))


def bleu(prediction: str, reference: str) -> float:
    """sacrebleu's sentence BLEU with default settings, on a 0..1 scale."""
    return float(_bleu().sentence_score(prediction, [reference]).score) / 100


def rouge(prediction: str, reference: str, kind: str = "rougeL") -> float:
    """rouge-score's F-measure (Porter stemmer) of `kind`: rouge1, rouge2 or rougeL."""
    scores = _rouge_scorer().score(reference, prediction)  # target first
    return float(scores[kind].fmeasure)


@functools.cache
def _bleu() -> Any:
    nlp_library("bleu")  # the extra's absence said by name
    from sacrebleu.metrics.bleu import BLEU

    # the settings of sacrebleu.sentence_bleu()
    return BLEU(effective_order=True)


@functools.cache
def _rouge_scorer() -> Any:
    nlp_library("rouge")  # the extra's absence said by name
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)


# --- checks -------------------------------------------------------------------------


def contains(output: str, expected: str) -> float:
    def flat(text: str) -> str:
        return " ".join(text.casefold().split())

    return float(flat(expected) in flat(output))


def regex_match(output: str, pattern: str) -> float:
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise MetricError(f"invalid regex /{pattern}/: {exc}") from None
    return float(compiled.search(output) is not None)


@dataclass(frozen=True)
class NumberReading:
    """How `numeric` reads a number: `%` as /100, and which characters group digits."""

    percent: bool = False
    separators: bool = False


def first_number(text: str, reading: NumberReading = NumberReading()) -> float | None:
    match = (_NUMBER_GROUPED if reading.separators else _NUMBER).search(text)
    if match is None:
        return None
    digits = match.group().replace("\u2212", "-")
    for separator in "," + (_GROUPS if reading.separators else ""):
        digits = digits.replace(separator, "")
    value = float(digits)
    if reading.percent and _PERCENT.match(text, match.end()):
        value /= 100
    return value


def numeric(
    output: str,
    expected: str,
    tolerance: float,
    *,
    relative: float = 0.0,
    reading: NumberReading = NumberReading(),
) -> tuple[float, str]:
    """1 when the output's first number is within `tolerance`, or `relative` × |expected|,
    of the ground truth's first number."""
    wanted = first_number(expected, reading)
    if wanted is None:
        raise MetricError("numeric: the ground truth has no number")
    got = first_number(output, reading)
    if got is None:
        return 0.0, "the output has no number"
    allowed = max(tolerance, relative * abs(wanted))
    within = abs(got - wanted) <= allowed
    spec = f"{_show(wanted)} ± {_show(allowed)}" if allowed else _show(wanted)
    return float(within), f"{_show(got)}, expected {spec}"


def _show(number: float) -> str:
    return f"{number:g}"
