"""Find the tools a Python file defines, without importing it.

Every public (not `_`-prefixed) top-level function is a tool. A file with one
public function gives a tool named after the file stem; with several, each is
`<stem>_<function>`. (Dotted names such as `arxiv.search` cannot be sent to
model providers, which accept only `^[a-zA-Z0-9_-]{1,64}$`.)
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from holodeck.spec._base import TOOL_NAME_PATTERN
from holodeck.spec.diagnostics import Diagnostic

_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)


@dataclass(frozen=True)
class FoundFunction:
    name: str
    line: int
    docstring: str | None
    arguments: tuple[tuple[str, bool], ...] = ()  # (name, has a default), in order
    any_keyword: bool = False  # takes **kwargs


def _arguments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[tuple[str, bool], ...]:
    spec = node.args
    positional = [*spec.posonlyargs, *spec.args]
    first_default = len(positional) - len(spec.defaults)
    out = [(a.arg, i >= first_default) for i, a in enumerate(positional)]
    out += [(a.arg, d is not None) for a, d in zip(spec.kwonlyargs, spec.kw_defaults, strict=True)]
    return tuple(out)


def public_functions(path: Path) -> tuple[list[FoundFunction], list[Diagnostic]]:
    """Top-level public functions of `path`, or a diagnostic if it can't be parsed."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Diagnostic(f"cannot read Python file: {exc}", file=path)]
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        return [], [
            Diagnostic(
                f"Python syntax error: {exc.msg}",
                file=path,
                line=exc.lineno,
                column=exc.offset,
            )
        ]
    found = [
        FoundFunction(
            node.name,
            node.lineno,
            ast.get_docstring(node),
            _arguments(node),
            node.args.kwarg is not None,
        )
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("_")
    ]
    return found, []


def tool_names(path: Path, functions: list[FoundFunction]) -> list[tuple[str, FoundFunction]]:
    """The exposed tool name for each public function of an image's Python file."""
    if len(functions) == 1:
        return [(path.stem, functions[0])]
    return [(f"{path.stem}_{fn.name}", fn) for fn in functions]


def is_valid_tool_name(name: str) -> bool:
    return _TOOL_NAME.fullmatch(name) is not None


def summary(docstring: str | None) -> str | None:
    """The first paragraph of a docstring, as a tool description."""
    if not docstring:
        return None
    return docstring.strip().split("\n\n", 1)[0].replace("\n", " ").strip() or None
