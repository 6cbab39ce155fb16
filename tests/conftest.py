from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

# real Redis and PostgreSQL servers (redis_url, postgres_url); the wheel and a venv per Python
pytest_plugins = ["db_servers", "python_envs"]

# CI replays the same examples every run (a landing must not hinge on a lucky draw);
# developers' runs explore new ones.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

PROVIDER_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "OPENAI_API_VERSION",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OLLAMA_BASE_URL",
)

Write = Callable[[dict[str, str]], Path]


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Never read the developer's ~/.holodeck or provider keys."""
    home = tmp_path_factory.mktemp("holodeck-home")
    monkeypatch.setenv("HOLODECK_HOME", str(home))
    for var in PROVIDER_VARS:
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def write(tmp_path: Path) -> Write:
    """Write `{relative path: text}` under a fresh directory and return it."""
    counter = [0]

    def _write(files: dict[str, str]) -> Path:
        counter[0] += 1
        root = tmp_path / f"agent{counter[0]}"
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        root.mkdir(parents=True, exist_ok=True)
        return root

    return _write


MINIMAL_AGENT = """
name: demo
model:
  provider: openai
  name: gpt-4o-mini
instructions:
  inline: You are helpful.
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
