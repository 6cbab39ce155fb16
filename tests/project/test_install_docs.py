"""The install commands the README and docs/testing.md give, run as written: from a
checkout with pip, uv's tools and pipx, and the CI recipe's install from a wheel and
the lock. Each installs into a place of its own and then runs `holodeck`."""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from python_envs import BIN, EXE, LOCK, REPO, clean_env, find_python, run

pytestmark = pytest.mark.slow

README = (REPO / "README.md").read_text(encoding="utf-8")
TESTING = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")


def readme_install_lines() -> list[str]:
    (block,) = re.findall(r"```bash install\n(.*?)```", README, flags=re.DOTALL)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def works(holodeck: Path, env: dict[str, str], cwd: Path) -> None:
    """The installed command answers and tests the weather example offline."""
    assert run([holodeck, "--version"], timeout=60, env=env, cwd=cwd).stdout.startswith(
        "holodeck, version "
    )
    shutil.copytree(REPO / "examples" / "weather", cwd / "weather")
    run([holodeck, "test", "weather", "--model", "test"], timeout=300, env=env, cwd=cwd)


def test_the_readme_names_three_ways_to_install_from_a_checkout() -> None:
    assert [line.split()[0:2] for line in readme_install_lines()] == [
        ["pip", "install"],
        ["uv", "tool"],
        ["pipx", "install"],
    ]


@pytest.mark.parametrize("tool", ["pip", "uv", "pipx"])
def test_each_readme_install_line_installs_a_working_holodeck(tmp_path: Path, tool: str) -> None:
    (line,) = [line for line in readme_install_lines() if line.startswith(tool + " ")]
    env = clean_env(tmp_path / "holodeck-home")
    bins = Path(sys.executable).parent  # uv and pipx, from the dev extra
    if tool == "pip":
        python = find_python("3.11") or Path(sys.executable)
        venv = tmp_path / "venv"
        run([python, "-m", "venv", venv], timeout=300, env=env)
        env["PATH"] = f"{venv / BIN}:{env['PATH']}"
        holodeck = venv / BIN / f"holodeck{EXE}"
    else:
        tools, tool_bin = tmp_path / "tools", tmp_path / "bin"
        env |= {
            "PATH": f"{bins}:{env['PATH']}",
            "UV_TOOL_DIR": str(tools),
            "UV_TOOL_BIN_DIR": str(tool_bin),
            "UV_NATIVE_TLS": "1",  # this machine's certificate store, as pip uses
            "PIPX_HOME": str(tools),
            "PIPX_BIN_DIR": str(tool_bin),
            "PIPX_MAN_DIR": str(tmp_path / "man"),
            "PIPX_DEFAULT_PYTHON": sys.executable,
        }
        holodeck = tool_bin / f"holodeck{EXE}"
    run(shlex.split(line), timeout=900, env=env, cwd=REPO)
    assert holodeck.is_file(), f"{line} put no holodeck command in {holodeck.parent}"
    works(holodeck, env, tmp_path)


def test_the_ci_recipe_installs_from_a_wheel_and_the_lock(tmp_path: Path, wheel: Path) -> None:
    """docs/testing.md's GitHub Actions steps: the wheel and requirements.lock kept in the
    agent's repository under holodeck-wheel/."""
    section = TESTING.split("### GitHub Actions", 1)[1]
    lines = {line.strip() for line in re.findall(r"- run: (pip install .*)", section)}
    (line,) = lines
    repository = tmp_path / "agent-repo"
    (repository / "holodeck-wheel").mkdir(parents=True)
    shutil.copy(wheel, repository / "holodeck-wheel")
    shutil.copy(LOCK, repository / "holodeck-wheel")
    env = clean_env(tmp_path / "holodeck-home")
    python = find_python("3.11") or Path(sys.executable)
    venv = tmp_path / "venv"
    run([python, "-m", "venv", venv], timeout=300, env=env)
    command = shlex.split(line)
    run([venv / BIN / f"python{EXE}", "-m", *command], timeout=900, env=env, cwd=repository)
    works(venv / BIN / f"holodeck{EXE}", env, repository)
