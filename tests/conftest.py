from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

# real Redis and PostgreSQL servers (redis_url, postgres_url); vector databases
# (pgvector_url, redis_stack_url, chroma_url); the wheel and a venv per
# Python; `serve`, the HTTP service under uvicorn
pytest_plugins = ["db_servers", "python_envs", "server_harness", "vector_servers"]

# CI replays the same examples every run (a landing must not hinge on a lucky draw);
# developers' runs explore new ones.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


def _provider_vars() -> tuple[str, ...]:
    from holodeck.config.credentials import ENV_VARS

    names = {name for fields in ENV_VARS.values() for group in fields.values() for name in group}
    # read by the Google SDKs themselves, or for Vertex AI's project and region
    names |= {
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "VERTEXAI_PROJECT",
        "VERTEXAI_LOCATION",
        "GOOGLE_GENAI_USE_VERTEXAI",
    }
    return tuple(sorted(names))


PROVIDER_VARS = _provider_vars()

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
