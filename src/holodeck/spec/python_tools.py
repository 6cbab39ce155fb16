"""Find the tools a Python file defines, without importing it.

Every public (not `_`-prefixed) top-level function is a tool. A file with one
public function gives a tool named after the file stem; with several, each is
`<stem>_<function>`. (Dotted names such as `arxiv.search` cannot be sent to
model providers, which accept only `^[a-zA-Z0-9_-]{1,64}$`.)

A file written for Omnigent marks its tools with the `omnigent_client` `@tool`
decorator: then only the marked functions are tools, each named after its function,
as Omnigent names them (the others are helpers). The decorator only attaches metadata
and returns the function itself, so the function runs here unchanged once
`omnigent_client` is installed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from holodeck.spec.diagnostics import Diagnostic
from holodeck.spec.models.base import TOOL_NAME_PATTERN

_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)


OMNIGENT_MODULES = ("omnigent_client", "omnigent_client.tools")
# A parameter an Omnigent server fills with per-conversation state.
SERVER_PARAMETERS = {"tool_state": "an omnigent_client ToolState, given by an Omnigent server"}


@dataclass(frozen=True)
class FoundFunction:
    name: str
    line: int
    docstring: str | None
    arguments: tuple[tuple[str, bool], ...] = ()  # (name, has a default), in order
    any_keyword: bool = False  # takes **kwargs
    decorated: bool = False  # with omnigent_client's `@tool`

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.arguments)


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
    names, modules = _tool_decorator_names(tree)
    found = [
        FoundFunction(
            node.name,
            node.lineno,
            ast.get_docstring(node),
            _arguments(node),
            node.args.kwarg is not None,
            any(_is_tool(d, names, modules) for d in node.decorator_list),
        )
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("_")
    ]
    return found, _server_parameters(path, found)


def _tool_decorator_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound to omnigent_client's `tool`, and names bound to its modules."""
    names: set[str] = set()
    modules: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in OMNIGENT_MODULES:
            names.update(a.asname or a.name for a in node.names if a.name == "tool")
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name in OMNIGENT_MODULES)
    return names, modules


def _is_tool(decorator: ast.expr, names: set[str], modules: set[str]) -> bool:
    if isinstance(decorator, ast.Call):  # `@tool(strict=False)`
        decorator = decorator.func
    if isinstance(decorator, ast.Name):
        return decorator.id in names
    return (
        isinstance(decorator, ast.Attribute)
        and decorator.attr == "tool"
        and ast.unparse(decorator.value) in modules
    )


def _server_parameters(path: Path, found: list[FoundFunction]) -> list[Diagnostic]:
    return [
        Diagnostic(
            f"`{fn.name}` takes `{name}`: {what}, which HoloDeck does not have",
            file=path,
            line=fn.line,
            hint=f"remove the `{name}` parameter; keep state in a file or an MCP server",
        )
        for fn in found
        if fn.decorated
        for name, what in SERVER_PARAMETERS.items()
        if name in fn.parameters
    ]


def tool_names(path: Path, functions: list[FoundFunction]) -> list[tuple[str, FoundFunction]]:
    """The exposed tool name for each public function of an image's Python file."""
    marked = [fn for fn in functions if fn.decorated]
    if marked:
        return [(fn.name, fn) for fn in marked]
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
