"""The README's commands and sample output are what the code does."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from holodeck.cli.main import cli

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")

BROKEN = """\
name: demo
model:
  provider: openai
  name: gpt-4o
  temprature: 0.5
instructions:
  inline: hi
tools:
  - type: function
    name: lookup
  - type: vectorstor
    name: docs
"""


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_readme_starts_with_the_two_setup_commands() -> None:
    first = blocks("bash")[0].splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["make demo", "make test"]


def test_readme_commands_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    shutil.copytree(Path(__file__).resolve().parents[2] / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for line in blocks("bash")[1].splitlines():
        command = shlex.split(line.split("#")[0])
        assert command[0] == "holodeck"
        result = runner.invoke(cli, command[1:])
        assert result.exit_code == 0, (line, result.output)


def test_readme_error_sample_is_real_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sample's YAML is BROKEN above; its output must match line for line."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.yaml").write_text(BROKEN, encoding="utf-8")
    command, *expected = blocks("text")[0].strip().splitlines()
    result = CliRunner().invoke(cli, shlex.split(command.removeprefix("$ "))[1:])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == expected
