"""The names a program imports: the front doors, and every package's one export list."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import holodeck
from holodeck import RunOptions, load_agent
from holodeck.runtime import ToolContext, tool_context

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_program_loads_from_the_top_and_takes_the_tool_context_from_the_runtime() -> None:
    spec = load_agent(EXAMPLES / "weather")
    context = tool_context(spec, RunOptions(model="test"))
    assert isinstance(context, ToolContext)
    assert context.model == "test"


# --- one export list per package, and private modules kept private -----------------------

SRC = Path(holodeck.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


LAZY_PACKAGES = sorted(
    path for path in SRC.rglob("__init__.py") if "lazy_exports(" in path.read_text("utf-8")
)


def _exports_map(tree: ast.Module) -> dict[str, str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            "_EXPORTS"
        ]:
            assert isinstance(node.value, ast.Dict)
            return {
                ast.literal_eval(key): ast.literal_eval(value)
                for key, value in zip(node.value.keys, node.value.values, strict=True)
                if key is not None
            }
    raise AssertionError("no `_EXPORTS = {name: module}` at the top of the package")


def _type_checking_imports(tree: ast.Module) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module
                for alias in stmt.names:
                    if alias.asname == alias.name:  # a re-export; a plain import is a type's
                        found[alias.name] = stmt.module
    return found


@pytest.mark.parametrize("init", LAZY_PACKAGES, ids=_module_name)
def test_a_lazy_package_lists_its_names_once(init: Path) -> None:
    """`_EXPORTS` is the list: `__all__` and `__getattr__` are made from it, and the
    imports type checkers read under TYPE_CHECKING say exactly the same."""
    tree = ast.parse(init.read_text("utf-8"))
    exports = _exports_map(tree)
    assert _type_checking_imports(tree) == exports
    all_sources = " ".join(
        ast.unparse(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign | ast.AugAssign)
        and ast.unparse(n.targets[0] if isinstance(n, ast.Assign) else n.target) == "__all__"
    )
    assert "sorted(_EXPORTS)" in all_sources, "derive __all__ from _EXPORTS"
    package = importlib.import_module(_module_name(init))
    assert set(exports) <= set(package.__all__)
    for name, module in exports.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), name), name


# Private modules still imported from outside their package, to be reached through that
# package's exports instead.
NOT_YET_PRIVATE = {
    "holodeck.search.embeddings._protocol",
    "holodeck.search.stores._protocol",
    "holodeck.testing.reports._format",
    "holodeck.testing.dashboard._index",
    "holodeck.runtime.harness._model",
    "holodeck.llm.providers._sampling",
}


def _private_part(module: str) -> str | None:
    """`module` up to its first `_private` part (a module or package), if it has one."""
    parts = module.split(".")
    for index, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[: index + 1])
    return None


def test_private_modules_are_imported_only_inside_their_package() -> None:
    """The naming rule: a module named `_x` is its package's own; other packages import
    what the package exports, or one of its public (concept-named) modules."""
    found: set[tuple[str, str]] = set()
    for path in SRC.rglob("*.py"):
        importer = _module_name(path)
        here = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                private = _private_part(target) if target.startswith("holodeck.") else None
                owner = private.rpartition(".")[0] if private else None
                if owner and here != owner and not here.startswith(owner + "."):
                    found.add((importer, private or ""))
    assert {pair for pair in found if pair[1] not in NOT_YET_PRIVATE} == set()
