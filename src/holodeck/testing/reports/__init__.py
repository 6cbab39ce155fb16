"""Reports of a test run: the console view (`reports.console`) and files written by
`write_report` as JSON, Markdown, JUnit XML or a self-contained HTML page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from holodeck.errors import ConfigurationError
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

FORMATS = ("json", "markdown", "junit", "html")

# Longest suffix first: `.junit.xml` before `.xml`.
_EXTENSIONS = {
    ".junit.xml": "junit",
    ".xml": "junit",
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
}


class ReportFormatError(ConfigurationError):
    """A report's format is unknown, or cannot be told from its file name."""


def format_for(path: Path, fmt: str | None = None) -> str:
    """The format to write `path` in: `fmt` when given, else the one its extension names."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise ReportFormatError(
                f"unknown report format {fmt!r}", hint=f"choose one of: {', '.join(FORMATS)}"
            )
        return fmt
    name = path.name.lower()
    for suffix, found in _EXTENSIONS.items():
        if name.endswith(suffix):
            return found
    known = ", ".join(_EXTENSIONS)
    raise ReportFormatError(
        f"cannot tell the report format of {str(path)!r} from its extension",
        hint=f"use one of {known} or name the format ({', '.join(FORMATS)})",
    )


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
