"""The Python examples of the runtime guide run as written, one after another (later
blocks use what earlier ones made), each as the body of a coroutine."""

from __future__ import annotations

import asyncio
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent


def python_blocks(page: str) -> list[str]:
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.M | re.S)


def test_the_runtime_guides_python_examples_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks("runtime.md")
    assert len(blocks) >= 3
    namespace: dict[str, Any] = {}
    for block in blocks:
        body = textwrap.indent(block, "    ")
        exec(f"async def example():\n{body}\n    return locals()\n", namespace)
        namespace.update(asyncio.run(namespace["example"]()))
    assert "weather" in capsys.readouterr().out  # the stream's events were printed
    assert (tmp_path / "sessions.db").is_file()  # the store example kept its session
