"""Problems inside an image `.tar.gz` are located in the archive, not in its cache.

An archive is unpacked under ~/.holodeck/cache/images/<sha256>/ and loaded from
there, so its diagnostics first name files in that cache: a path the user never
wrote and must not edit. They are moved to `support.tar.gz!/config.yaml:3:1`: the
archive as given, `!/`, then the member's name inside it (with the folder the
archive wraps everything in, if any). `!/` (as in jar: URLs) rather than a colon
keeps `file:line:column` readable by editors and tools that split on colons.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

from holodeck.spec.diagnostics import Diagnostic, display_path

SEPARATOR = "!/"


def cache_entry(root: Path, cache_dir: Path) -> Path:
    """The cache directory one archive was unpacked into (`root` may be a folder in it)."""
    root, cache_dir = root.resolve(), cache_dir.resolve()
    return cache_dir / root.relative_to(cache_dir).parts[0]


def in_archive(diagnostics: Iterable[Diagnostic], archive: Path, entry: Path) -> list[Diagnostic]:
    """`diagnostics` with files under `entry` (and paths in their text) moved into `archive`."""
    entry = entry.resolve()
    spellings = sorted({str(entry), display_path(entry)}, key=len, reverse=True)
    out = []
    for d in diagnostics:
        member = _member(d, entry)
        message, hint = _text(d.message, spellings, archive), d.hint
        if hint is not None:
            hint = _text(hint, spellings, archive)
        if member is None:
            out.append(dataclasses.replace(d, message=message, hint=hint))
        else:
            out.append(
                dataclasses.replace(d, file=archive, member=member, message=message, hint=hint)
            )
    return out


def _member(d: Diagnostic, entry: Path) -> str | None:
    if d.file is None:
        return None
    try:
        inside = d.file.resolve().relative_to(entry).as_posix()
    except (ValueError, OSError):
        return None
    # a diagnostic already in an archive of this one (a sub-agent's .tar.gz)
    return f"{inside}{SEPARATOR}{d.member}" if d.member else inside


def _text(text: str, spellings: list[str], archive: Path) -> str:
    for spelling in spellings:
        text = text.replace(spelling + "/", display_path(archive) + SEPARATOR)
        text = text.replace(spelling, display_path(archive))
    return text
