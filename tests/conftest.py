from __future__ import annotations

import os
import textwrap
import types
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


# --- lanes: `make test-fast` runs what needs none of these (`-m "not services and not ..."`)

# fixtures that start a server: a test using one (directly, through another fixture, or
# through a parameter naming it) is `services`
SERVICE_FIXTURES = frozenset(
    {"redis_url", "postgres_url", "pgvector_url", "redis_stack_url", "chroma_url"}
)
# parameters naming a server the test asks for with `request.getfixturevalue`
SERVICE_PARAMS = frozenset({"redis", "postgres", "pgvector", "chromadb", "redis_stack"})
CONTAINER_FIXTURES = frozenset({"base_image", "wheels"})
SLOW_FIXTURES = frozenset({"wheel", "wheel_venv"})  # a wheel built, venvs installed
BROWSER_CALLS = frozenset({"chromium_page", "playwright_api"})  # tests/browser.py


def _calls(function: object, module: types.ModuleType, seen: set[str]) -> set[str]:
    """The global names `function` uses, and those of the module's functions it calls."""
    code = getattr(function, "__code__", None)
    if code is None:
        return set()
    names = set(code.co_names)
    for const in code.co_consts:  # nested functions and lambdas
        if isinstance(const, types.CodeType):
            names |= set(const.co_names)
    for name in names - seen:
        seen.add(name)
        called = getattr(module, name, None)
        if isinstance(called, types.FunctionType) and called.__module__ == module.__name__:
            names |= _calls(called, module, seen)
    return names


def _measured_slow() -> frozenset[str]:
    """tests/slow_tests.txt: what took 1.5 s or more in a measured run (tests/slow_list.py)."""
    listed = Path(__file__).with_name("slow_tests.txt").read_text(encoding="utf-8")
    return frozenset(line for line in listed.splitlines() if line and not line.startswith("#"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    measured = _measured_slow()
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        if item.nodeid in measured or item.nodeid.split("::")[0] in measured:
            item.add_marker(pytest.mark.slow)
        used = set(item.fixturenames)
        callspec = getattr(item, "callspec", None)
        if callspec is not None:
            used |= {v for v in callspec.params.values() if isinstance(v, str)}
        if used & (SERVICE_FIXTURES | SERVICE_PARAMS):
            item.add_marker(pytest.mark.services)
        if used & CONTAINER_FIXTURES:
            item.add_marker(pytest.mark.container)
        if used & SLOW_FIXTURES:
            item.add_marker(pytest.mark.slow)
        # the test and the fixtures it uses, by what they call
        functions = [(item.function, item.module)] + [
            (definition.func, item.module)
            for definitions in item._fixtureinfo.name2fixturedefs.values()
            for definition in definitions
            if definition.func.__module__ == item.module.__name__
        ]
        if any(_calls(f, m, set()) & BROWSER_CALLS for f, m in functions):
            item.add_marker(pytest.mark.browser)
