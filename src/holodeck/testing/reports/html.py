"""The HTML report: one self-contained file (inline CSS and JS, no network) with a summary,
filters and a drill-down per case. The page comes from `report.html.j2` beside this module,
rendered with autoescaping, so everything a case produced is shown as text."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from holodeck.spec.diagnostics import display_path
from holodeck.testing.reports import _format, matrix_view
from holodeck.testing.results import CaseResult, MetricResult, TestRun


def render_html(run: TestRun) -> str:
    import jinja2
    from markupsafe import Markup

    assets = files("holodeck.testing.reports")

    def shown(value: Any) -> Any:
        """Every value printed into the page, before escaping: control characters made
        visible (our own inline CSS and JS are Markup and pass untouched)."""
        if isinstance(value, str) and not isinstance(value, Markup):
            return _format.visible(value)
        return value

    env = jinja2.Environment(
        autoescape=True,
        finalize=shown,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals.update(
        label=_format.metric_label,
        score_parts=_format.score_parts,
        error_text=_format.metric_error_text,
        duration=_format.duration,
        tokens=_format.tokens,
        as_json=_format.as_json,
        handoff_text=_format.handoff_text,
        short_json=_format.short_json,
        tool_check_lines=_format.tool_check_lines,
        failed_calls_line=_format.failed_calls_line,
        passed_runs=_format.passed_runs,
        case_duration=_format.case_duration,
        case_tokens=_format.case_tokens,
        case_cost=_format.case_cost,
        dollars=_format.dollars,
        shown_run=_format.shown_run,
        spread_lines=_format.spread_lines,
        stop_text=_format.stop_text,
        bar=_bar,
        chips=_chips,
    )
    template = env.from_string(assets.joinpath("report.html.j2").read_text(encoding="utf-8"))
    return template.render(
        run=run,
        css=Markup(assets.joinpath("report.css").read_text(encoding="utf-8")),
        js=Markup(assets.joinpath("report.js").read_text(encoding="utf-8")),
        pass_percent=_format.pass_percent(run),
        matrix=_matrix(run) if run.matrix else None,
        note=_format.judgement_note(run),
        prompt_label=_format.prompt_label(run),
        source=display_path(Path(run.source)),
        counts={
            "all": len(run.cases),
            "failed": sum(1 for c in run.cases if c.status != "pass"),
            "flaky": sum(1 for c in run.cases if c.flaky),
        },
    )


def _matrix(run: TestRun) -> dict[str, Any]:
    """The side-by-side tables of a run over several models."""
    return {
        "model_headers": matrix_view.MODEL_HEADERS,
        "models": [matrix_view.model_cells(s) for s in matrix_view.model_stats(run)],
        "case_headers": matrix_view.case_headers(run),
        "cases": [(matrix_view.case_cells(r), r.disagree) for r in matrix_view.case_rows(run)],
        "line": matrix_view.disagreement_line(run),
    }


def _bar(metric: MetricResult) -> dict[str, float] | None:
    """Where the score and threshold sit on the metric's scale, in percent."""
    if metric.score is None or metric.scale_max <= 0:
        return None
    scale = metric.scale_max

    def pct(value: float) -> float:
        return round(min(max(value / scale, 0.0), 1.0) * 100, 1)

    bar = {"score": pct(metric.score)}
    if metric.threshold is not None:
        bar["threshold"] = pct(metric.threshold)
    return bar


def _chips(case: CaseResult) -> list[dict[str, Any]]:
    """Metric badges for a case's collapsed row (from the run the row stands for)."""
    run = _format.shown_run(case)
    if run is None:
        return []
    out: list[dict[str, Any]] = []
    for metric in run.metrics:
        score, _ = _format.score_parts(metric)
        out.append(
            {
                "label": _format.metric_label(metric.name),
                "score": score.split("/")[0] if score else None,
                "status": metric.status,
                "judged": metric.judged,
            }
        )
    return out
