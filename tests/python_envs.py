"""Python environments for the tests that install HoloDeck as a user would: the wheel,
built once per test run, and a virtual environment per supported interpreter with the
wheel installed (dependencies from the package registry), made once per run and shared
by the tests and pytest-xdist workers that need it (`wheel_venv("3.12")`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = "Scripts" if os.name == "nt" else "bin"
EXE = ".exe" if os.name == "nt" else ""
LOCK = REPO / "requirements.lock"
SUPPORTED = ("3.11", "3.12", "3.13")  # as pyproject's requires-python and classifiers say


def run(
    command: list[str | Path],
    *,
    timeout: float,
    cwd: Path | None = None,
    env: dict[str, str],
    codes: tuple[int, ...] = (0,),
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        input=input,
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
    shared = _shared(tmp_path_factory)
    dist = shared / "holodeck-dist"
    with locked(shared / "holodeck-dist.lock"):
        built = sorted(dist.glob("holodeck_agents-*.whl"))
        if not built:
            env = clean_env(shared / "holodeck-home")
            run(
                [sys.executable, "-m", "build", "--wheel", "--outdir", dist, REPO],
                timeout=600,
                env=env,
            )
            built = sorted(dist.glob("holodeck_agents-*.whl"))
    (found,) = built
    return found


def installer(venv: Path) -> list[str | Path]:
    """The command that installs packages into `venv`, before the package names.

    uv when the test environment has it (the dev extra): it downloads and installs in
    parallel; the wheel tests took 79 s with it against 174 s with pip on a quiet 2-core
    machine. pip otherwise. Either resolves the wheel's dependencies from the package
    registry at the versions requirements.lock pins, as `make` installs them. uv leaves bytecode to the first import, which is what the tests exercise
    (compiling all of site-packages up front, as pip does, cost the run 40 s).
    """
    python = venv / BIN / f"python{EXE}"
    uv = Path(sys.executable).with_name(f"uv{EXE}")
    if uv.is_file():
        return [uv, "pip", "install", "--quiet", "--native-tls", "-c", LOCK, "--python", python]
    return [python, "-m", "pip", "install", "--quiet", "-c", LOCK]


def _shared(factory: pytest.TempPathFactory) -> Path:
    shared = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the directory every worker of this run has in common
    return shared


@pytest.fixture(scope="session")
def wheel_venv(
    wheel: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Path | None]:
    """`wheel_venv(version)`: a venv of that Python with the wheel installed, made once
    per run; None when that interpreter is not on this machine."""
    shared = _shared(tmp_path_factory)

    def make(version: str) -> Path | None:
        python_found = find_python(version)
        if python_found is None:
            return None
        venv = shared / f"venv-{version}"
        with locked(shared / f"venv-{version}.lock"):
            if not (venv / "installed").is_file():
                shutil.rmtree(venv, ignore_errors=True)
                env = clean_env(shared / "holodeck-home")
                run([python_found, "-m", "venv", venv], timeout=300, env=env)
                run([*installer(venv), wheel], timeout=900, env=env)
                (venv / "installed").write_text(str(wheel))
        return venv

    return make
