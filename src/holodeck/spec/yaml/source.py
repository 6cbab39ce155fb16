"""YAML documents as plain Python data plus the line and column of every field.

Values are converted to plain `dict`/`list`/scalars so later stages never see
parser-specific types; positions live beside them, keyed by field path.

Most documents are read by libyaml's event stream (`_yaml_fast`); anything it does
not handle itself, and every document with a syntax error, goes to the round-trip
parser (`_yaml_roundtrip`), whose messages, hints and positions are the reference.
Both stay within `yaml_limits`: a file's size is checked before it is read, and the
values and nesting of a document before the round-trip parser builds it.
"""

from __future__ import annotations

from pathlib import Path

from holodeck.spec.diagnostics import Diagnostic, SpecError
from holodeck.spec.yaml._fast import parse_fast
from holodeck.spec.yaml._roundtrip import parse_roundtrip
from holodeck.spec.yaml.document import Position, YamlDocument
from holodeck.spec.yaml.limits import DEFINITION, YamlLimits, check_structure, read_limited

__all__ = ["Position", "YamlDocument", "parse_yaml", "read_yaml"]


def parse_yaml(
    text: str, file: Path | None = None, limits: YamlLimits = DEFINITION
) -> YamlDocument:
    """Parse `text`; raise `SpecError` with line and column on invalid syntax, or naming
    the limit of `limits` it is over."""
    limits.check_length(len(text), file)
    doc = parse_fast(text, file, limits)
    if doc is not None:
        return doc
    check_structure(text, file, limits)  # the round-trip parser is slow: check first
    return parse_roundtrip(text, file, limits)


def read_yaml(path: Path, limits: YamlLimits = DEFINITION) -> YamlDocument:
    """Read and parse a YAML file; unreadable or oversized files become diagnostics."""
    return parse_yaml(read_text(path, limits), path, limits)


def read_text(path: Path, limits: YamlLimits = DEFINITION) -> str:
    """A definition file's text, within `limits`; a byte-order mark (spreadsheets and some
    editors write one) is dropped. Unreadable files become diagnostics."""
    try:
        return read_limited(path, limits).decode("utf-8-sig")
    except FileNotFoundError:
        raise SpecError([Diagnostic(f"file not found: {path}", file=path)]) from None
    except UnicodeDecodeError as exc:
        raise SpecError(
            [Diagnostic(f"not UTF-8 text (byte {exc.start})", file=path, hint="save as UTF-8")]
        ) from None
    except OSError as exc:
        raise SpecError([Diagnostic(f"cannot read file: {exc.strerror}", file=path)]) from None
