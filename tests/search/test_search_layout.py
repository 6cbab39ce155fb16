"""Search is one package, `holodeck.search`: its `__init__` files only re-export, importing
the package costs nothing, and no other package holds search code of its own. Web search
(a builtin tool) is another feature, in `tools/builtins/`, whose `__init__` also only
re-exports."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import holodeck

SRC = Path(holodeck.__file__).parent
SEARCH = SRC / "search"


INITS = [*sorted(SEARCH.rglob("__init__.py")), SRC / "tools" / "builtins" / "__init__.py"]


@pytest.mark.parametrize("init", INITS, ids=lambda p: str(p.relative_to(SRC)))
def test_init_files_only_re_export(init: Path) -> None:
    tree = ast.parse(init.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), f"{init}: say what the package holds"
    for node in tree.body[1:]:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else []
        assert [t.id for t in targets if isinstance(t, ast.Name)] == ["__all__"], (
            f"{init}:{node.lineno}: an __init__ only re-exports; move this to a module"
        )


def test_importing_the_search_package_loads_none_of_its_modules() -> None:
    code = (
        "import sys, holodeck.search\n"
        "print(sorted(m for m in sys.modules if m.startswith('holodeck.search.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_search_modules_are_only_under_holodeck_search() -> None:
    """The old homes of search code (`tools/search*.py`, `cli/search_checks.py`, `rag/`)
    are gone; `tools/builtins/_web_search.py` is web search, another feature."""
    outside = [
        p.relative_to(SRC).as_posix()
        for p in SRC.rglob("*.py")
        if ("search" in p.stem or "rag" in p.parts)
        and SEARCH not in p.parents
        and p.stem != "_web_search"
    ]
    assert outside == []
