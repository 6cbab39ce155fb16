"""The built wheel works on its own: templates are packaged, no dependency is missing.

Builds the wheel, installs it into a fresh virtual environment (dependencies come
from the package registry), then creates and validates agents with that install.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
BIN = "Scripts" if os.name == "nt" else "bin"
EXE = ".exe" if os.name == "nt" else ""


def run(
    command: list[str | Path], *, timeout: float, cwd: Path | None = None, env: dict[str, str]
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
    assert done.returncode == 0, f"{command} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def test_wheel_installs_into_a_clean_venv_and_creates_valid_agents(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_USER")
        and not key.startswith(("OPENAI_", "AZURE_OPENAI_", "ANTHROPIC_", "OLLAMA_"))
    }
    env |= {
        "HOLODECK_HOME": str(tmp_path / "holodeck-home"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
    }

    dist = tmp_path / "dist"
    run([sys.executable, "-m", "build", "--wheel", "--outdir", dist, REPO], timeout=600, env=env)
    (wheel,) = dist.glob("holodeck-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for packaged in (
        "holodeck/templates/customer-support/agent.yaml",
        "holodeck/templates/customer-support/data/products.csv",
        "holodeck/templates/research/data/interview-notes.txt",
        "holodeck/templates/image/research/skills/evidence-review/SKILL.md",
        "holodeck/tools/node/harness.cjs",
        "holodeck/tools/node/package.json",
    ):
        assert packaged in names

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], timeout=300, env=env)
    python = venv / BIN / f"python{EXE}"
    holodeck = venv / BIN / f"holodeck{EXE}"
    run([python, "-m", "pip", "install", "--quiet", wheel], timeout=900, env=env)

    where = run(
        [python, "-c", "import holodeck; print(holodeck.__file__)"],
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert Path(where.stdout.strip()).resolve().is_relative_to(venv.resolve())

    version = run([holodeck, "--version"], timeout=60, env=env, cwd=tmp_path)
    assert version.stdout.startswith("holodeck, version ")

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

    checked = run([holodeck, "validate", "demo", "img"], timeout=120, env=env, cwd=tmp_path)
    lines = checked.stdout.splitlines()
    assert any(line.startswith("OK demo (agent.yaml: demo, 3 tools") for line in lines), lines
    assert any(line.startswith("OK img (image: img, 1 tools, 1 skills") for line in lines), lines
    assert "warning" not in checked.stdout + checked.stderr
