"""A person's first hour with `holodeck test` and friends in a terminal: `--debug` where
the hints put it, a missing key's exit code, options refused before any case runs, and
failing cases that say what the agent answered and why they failed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conftest import Write
from holodeck.cli.main import cli
from holodeck.errors import EXIT_CONFIG

NO_KEY_AGENT = """
name: shop
model: {provider: openai, name: gpt-4o}
instructions: {inline: Help customers.}
test_cases:
  - {name: hello, input: hi}
"""


def run(*args: str, cwd: Path | None = None) -> Result:
    previous = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, list(args))
    finally:
        os.chdir(previous)


def _debug_cases(write: Write, tmp_path: Path) -> dict[str, tuple[str, ...]]:
    """A command line for each command that fails with an error the user can fix."""
    no_key = str(write({"agent.yaml": NO_KEY_AGENT}))
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine", encoding="utf-8")
    return {
        "init": ("init", str(taken)),
        "test": ("test", no_key),
        "chat": ("chat", no_key),
        "pack": ("pack", str(tmp_path / "no-such-image")),
        "test merge": ("test", "merge", str(tmp_path / "no-such-run.json")),
    }


@pytest.mark.parametrize("command", ["init", "test", "chat", "pack", "test merge"])
def test_debug_after_the_command_shows_the_traceback_as_before_it(
    command: str, write: Write, tmp_path: Path
) -> None:
    args = _debug_cases(write, tmp_path)[command]
    plain = run(*args, cwd=tmp_path)
    before = run("--debug", *args, cwd=tmp_path)
    after = run(*args, "--debug", cwd=tmp_path)
    assert plain.exit_code == before.exit_code == after.exit_code == EXIT_CONFIG, after.output
    assert "Traceback" not in plain.stderr
    for result in (before, after):
        assert "Traceback (most recent call last)" in result.stderr, result.output
        assert result.stderr.rstrip().endswith(plain.stderr.rstrip())  # then the message


def test_debug_after_the_command_is_accepted_where_nothing_raises(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")  # validate reports it as a diagnostic
    before = run("--debug", "validate", missing)
    after = run("validate", missing, "--debug")
    assert before.exit_code == after.exit_code == EXIT_CONFIG
    assert before.stderr == after.stderr and "no such file or directory" in after.stderr
    words = run("test", "merge", "--", "--debug")  # after `--`, an argument like any
    assert "--debug" in words.stderr and "No such option" not in words.stderr


def test_a_missing_api_key_is_a_configuration_error(write: Write, tmp_path: Path) -> None:
    root = str(write({"agent.yaml": NO_KEY_AGENT}))
    for command in ("test", "chat"):
        result = run(command, root, cwd=tmp_path)
        assert result.exit_code == EXIT_CONFIG, (command, result.output)
        assert result.stderr.splitlines()[0] == "error: openai/gpt-4o: no API key is set"
        assert "OPENAI_API_KEY" in result.stderr and "Traceback" not in result.stderr
