"""The side-by-side view of a run over several models, in the words every report format
uses: a row per model (pass rate, each metric's mean, latency, tokens, cost) and a row per
case with each model's result, the cases the models disagree on first."""

from __future__ import annotations

from holodeck.testing.matrix import CaseRow, ModelStats, case_rows, model_stats
from holodeck.testing.reports._format import case_cost, case_tokens, dollars, duration, tokens
from holodeck.testing.results import CaseResult, TestRun

MODEL_HEADERS = ("Model", "Passed", "Metrics (mean)", "Latency (mean)", "Tokens", "Cost")


def model_cells(stats: ModelStats) -> list[str]:
    """`openai/gpt-4o-mini | 3/4 (75%) | bleu 0.80 | 1.20s | 1,000 in / 200 out | $0.0060`."""
    metrics = ", ".join(f"{name} {score:.2f}" for name, score in stats.metrics.items())
    return [
        stats.model,
        f"{stats.passed}/{stats.cases} ({100 * stats.pass_rate:.0f}%)",
        metrics or "-",
        duration(stats.latency_ms),
        tokens(stats.input_tokens, stats.output_tokens),
        dollars(stats.cost_usd) or "-",
    ]


def case_cell(case: CaseResult | None) -> str:
    """One model's result of a case: `FAIL · 850ms · 1,200 tok · $0.006000 · bleu 0.40`."""
    if case is None:
        return "not run"
    used = sum(case_tokens(case))
    parts = [case.status.upper(), duration(sum(r.duration_ms for r in case.runs))]
    parts.append(f"{used:,} tok")
    cost = dollars(case_cost(case))
    if cost:
        parts.append(cost)
    shown = case.runs[0] if case.runs else None
    if shown is not None:
        parts += [f"{m.name} {m.score:.2f}" for m in shown.metrics if m.score is not None]
    return " · ".join(parts)


def case_headers(run: TestRun) -> list[str]:
    return ["Case", *run.matrix]


def case_cells(row: CaseRow) -> list[str]:
    name = f"{row.name} (models disagree)" if row.disagree else row.name
    return [name, *(case_cell(result) for result in row.results.values())]


def disagreement_line(run: TestRun) -> str:
    rows = case_rows(run)
    apart = sum(r.disagree for r in rows)
    if not apart:
        return f"The models agree on all {len(rows)} cases."
    return f"The models disagree on {apart} of {len(rows)} cases (listed first)."


__all__ = [
    "MODEL_HEADERS",
    "case_cells",
    "case_headers",
    "case_rows",
    "disagreement_line",
    "model_cells",
    "model_stats",
]
