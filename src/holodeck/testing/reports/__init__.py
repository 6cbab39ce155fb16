"""Reports of a test run: the console view (`reports.console`) and files written by
`write_report` as JSON, Markdown, JUnit XML or a self-contained HTML page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from holodeck.testing.report_formats import FORMATS, ReportFormatError, format_for
from holodeck.testing.reports.console import render_case, render_console, render_summary
from holodeck.testing.reports.html import render_html
from holodeck.testing.reports.junit import render_junit
from holodeck.testing.reports.markdown import render_markdown
from holodeck.testing.results import TestRun

__all__ = [
    "FORMATS",
    "ReportFormatError",
    "format_for",
    "render_case",
    "render_console",
    "render_report",
    "render_summary",
    "write_report",
]


def render_report(run: TestRun, fmt: str) -> str:
    """The report's text in one of FORMATS."""
    return _renderer(format_for(Path(), fmt))(run)


def write_report(run: TestRun, path: Path, fmt: str | None = None) -> Path:
    """Write `run` to `path` in `fmt` (or the format its extension names); returns the path."""
    text = _renderer(format_for(path, fmt))(run)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _renderer(fmt: str) -> Callable[[TestRun], str]:
    if fmt == "json":
        return lambda run: run.model_dump_json(indent=2) + "\n"
    if fmt == "markdown":
        return render_markdown
    if fmt == "junit":
        return render_junit

    return render_html
