"""Find the exported functions of a TypeScript tool file (by declaration, not by running it)."""

from __future__ import annotations

import re
from pathlib import Path

from holodeck.spec.diagnostics import Diagnostic
from holodeck.spec.python_tools import FoundFunction

_EXPORT = re.compile(
    r"^export\s+(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)"
    r"|^export\s+const\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?"
    r"(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)",
    re.MULTILINE,
)
# the JSDoc block right before a declaration: no `*/` inside, so one block only
_DOC = re.compile(r"/\*\*((?:(?!\*/).)*)\*/\s*$", re.DOTALL)


def exported_functions(path: Path) -> tuple[list[FoundFunction], list[Diagnostic]]:
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Diagnostic(f"cannot read TypeScript file: {exc}", file=path)]
    found = []
    for match in _EXPORT.finditer(source):
        name = match.group(1) or match.group(2)
        if name.startswith("_"):
            continue
        line = source.count("\n", 0, match.start()) + 1
        found.append(FoundFunction(name, line, _jsdoc_before(source, match.start())))
    return found, []


def _jsdoc_before(source: str, offset: int) -> str | None:
    doc = _DOC.search(source[max(0, offset - 2000) : offset])
    if doc is None:
        return None
    lines = [ln.strip().lstrip("*").strip() for ln in doc.group(1).splitlines()]
    text = "\n".join(ln for ln in lines if not ln.startswith("@")).strip()
    return text or None
