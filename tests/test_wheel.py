"""The built wheel works on its own, on every supported Python (3.11, 3.12, 3.13).

The wheel is built once per test run. For each supported interpreter found on this
machine (on PATH, or among pyenv's installed versions), it is installed into a
fresh virtual environment (dependencies come from the package registry); that
install then creates agents, tests one offline and validates the examples. An
interpreter that is not installed is skipped, saying so.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
BIN = "Scripts" if os.name == "nt" else "bin"
EXE = ".exe" if os.name == "nt" else ""
SUPPORTED = ("3.11", "3.12", "3.13")  # as pyproject's requires-python and classifiers say


def run(
    command: list[str | Path],
    *,
    timeout: float,
    cwd: Path | None = None,
    env: dict[str, str],
    codes: tuple[int, ...] = (0,),
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode in codes, (
        f"{command} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    )
    return done


def clean_env(home: Path) -> dict[str, str]:
    """This process's environment without its virtualenv, paths and provider keys."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_USER")
        and not key.startswith(("OPENAI_", "AZURE_OPENAI_", "ANTHROPIC_", "OLLAMA_"))
    }
    return env | {
        "HOLODECK_HOME": str(home),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
    }


def find_python(version: str) -> Path | None:
    """A working `python<version>`: this interpreter, one on PATH, or pyenv's.

    pyenv's shims are on PATH for every version but run only the active ones, so
    each candidate is run once to see that it starts, is that version and has venv.
    """
    candidates: list[str | None] = []
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        candidates.append(sys.executable)
    candidates.append(shutil.which(f"python{version}"))
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    if pyenv.is_dir():
        found = pyenv.glob(f"{version}.*/{BIN}/python{version}{EXE}")
        candidates.extend(str(p) for p in sorted(found, reverse=True))
    for candidate in candidates:
        if candidate is None:
            continue
        try:
            probe = subprocess.run(
                [candidate, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except OSError:
            continue
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return Path(candidate)
    return None


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """One process at a time (pytest-xdist workers share the built wheel)."""
    try:
        import fcntl
    except ImportError:  # Windows: workers may each build; still correct, only slower
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built once per test run (also across pytest-xdist workers)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the directory every worker of this run has in common
    dist = shared / "holodeck-dist"
    with locked(shared / "holodeck-dist.lock"):
        built = sorted(dist.glob("holodeck-*.whl"))
        if not built:
            env = clean_env(shared / "holodeck-home")
            run(
                [sys.executable, "-m", "build", "--wheel", "--outdir", dist, REPO],
                timeout=600,
                env=env,
            )
            built = sorted(dist.glob("holodeck-*.whl"))
    (found,) = built
    return found


def test_wheel_holds_templates_and_node_harness(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(
            archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA")
        )
    for packaged in (
        "holodeck/templates/customer-support/agent.yaml",
        "holodeck/templates/customer-support/data/products.csv",
        "holodeck/templates/conversational/agent.yaml",
        "holodeck/templates/research/data/interview-notes.txt",
        "holodeck/templates/image/research/skills/evidence-review/SKILL.md",
        "holodeck/tools/node/harness.cjs",
        "holodeck/tools/node/package.json",
    ):
        assert packaged in names
    (requires,) = [line for line in metadata.splitlines() if line.startswith("Requires-Python:")]
    assert ">=3.11" in requires and "<3.14" in requires, requires
    for version in SUPPORTED:
        assert f"Classifier: Programming Language :: Python :: {version}" in metadata


@pytest.mark.parametrize("version", SUPPORTED)
def test_wheel_installs_and_works_on_each_supported_python(
    version: str, wheel: Path, tmp_path: Path
) -> None:
    python_found = find_python(version)
    if python_found is None:
        pytest.skip(f"python{version} is not installed here (looked on PATH and in pyenv)")
    env = clean_env(tmp_path / "holodeck-home")

    venv = tmp_path / "venv"
    run([python_found, "-m", "venv", venv], timeout=300, env=env)
    python = venv / BIN / f"python{EXE}"
    holodeck = venv / BIN / f"holodeck{EXE}"
    run([python, "-m", "pip", "install", "--quiet", wheel], timeout=900, env=env)

    where = run(
        [python, "-c", "import sys, holodeck; print(holodeck.__file__); print(sys.version)"],
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert Path(where.stdout.splitlines()[0]).resolve().is_relative_to(venv.resolve())
    assert where.stdout.splitlines()[1].startswith(version + ".")

    version_line = run([holodeck, "--version"], timeout=60, env=env, cwd=tmp_path)
    assert version_line.stdout.startswith("holodeck, version ")

    # The conversational template runs offline end to end: its tools really run and
    # every case gets a verdict. Its F1 thresholds judge real answers, so the test
    # model's canned ones fail them (exit 1); an error would be exit 2 or 3.
    run([holodeck, "init", "x", "--template", "conversational"], timeout=120, env=env, cwd=tmp_path)
    smoke = run(
        [holodeck, "test", "x", "--model", "test"],
        timeout=300,
        env=env,
        cwd=tmp_path,
        codes=(0, 1),
    )
    assert " 0 errors " in smoke.stdout, smoke.stdout
    # The weather example's answers come from its tools, so its offline run passes.
    shutil.copytree(REPO / "examples" / "weather", tmp_path / "weather")
    run([holodeck, "test", "weather", "--model", "test"], timeout=300, env=env, cwd=tmp_path)

    made = run(
        [holodeck, "init", "demo", "--template", "customer-support"],
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert "holodeck validate demo" in made.stdout
    assert (tmp_path / "demo" / "data" / "products.csv").is_file()
    run([holodeck, "init", "img", "--format", "image"], timeout=120, env=env, cwd=tmp_path)
    assert (tmp_path / "img" / "config.yaml").is_file()

    checked = run([holodeck, "validate", "demo", "img", "x"], timeout=120, env=env, cwd=tmp_path)
    lines = checked.stdout.splitlines()
    assert any(line.startswith("OK demo (agent.yaml: demo, 3 tools") for line in lines), lines
    assert any(line.startswith("OK img (image: img, 1 tools, 1 skills") for line in lines), lines
    assert any(line.startswith("OK x (agent.yaml: x,") for line in lines), lines
    assert "warning" not in checked.stdout + checked.stderr

    examples = [REPO / "examples" / name for name in ("weather", "research", "support-image")]
    shown = run([holodeck, "validate", *examples], timeout=120, env=env, cwd=tmp_path)
    assert shown.stdout.count("OK ") == len(examples), shown.stdout
