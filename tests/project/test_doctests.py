"""Every example in the package's docstrings runs, from the repository root (where
`examples/` is), and none is skipped."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import holodeck

REPO = Path(__file__).resolve().parents[2]


def modules_with_examples() -> list[str]:
    found = []
    for info in pkgutil.walk_packages(holodeck.__path__, "holodeck."):
        if ".templates" in info.name or info.name.endswith("__main__"):
            continue
        spec = importlib.util.find_spec(info.name)
        assert spec is not None and spec.origin is not None
        if ">>>" in Path(spec.origin).read_text(encoding="utf-8"):
            found.append(info.name)
    return ["holodeck", *found]


@pytest.mark.parametrize("name", modules_with_examples())
def test_module_examples_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    module = importlib.import_module(name)
    source = Path(str(module.__file__)).read_text(encoding="utf-8")
    assert "doctest: +SKIP" not in source, f"{name} skips an example: make it run"
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(module, name) if t.examples]
    assert tests, f"{name}: no examples found"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} example(s) of {name} failed (see output)"
