"""Which format a report file is written in, told from `--format` or its name. Kept apart
from the renderers so that the command line checks `-o` before any case runs without
loading them.

    >>> format_for(Path("out/run.junit.xml"))
    'junit'
"""

from __future__ import annotations

from pathlib import Path

from holodeck.errors import ConfigurationError

__all__ = ["EXTENSIONS", "FORMATS", "ReportFormatError", "format_for"]

FORMATS = ("json", "markdown", "junit", "html")

# Longest suffix first: `.junit.xml` before `.xml`.
EXTENSIONS = {
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
    for suffix, found in EXTENSIONS.items():
        if name.endswith(suffix):
            return found
    known = ", ".join(EXTENSIONS)
    raise ReportFormatError(
        f"cannot tell the report format of {str(path)!r} from its extension",
        hint=f"name it with one of {known}, or add --format ({', '.join(FORMATS)})",
    )
