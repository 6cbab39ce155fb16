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


# --- options checked before the run ----------------------------------------------------

MARKED_AGENT = """
name: marked
model: {provider: test}
instructions: {inline: Look orders up.}
tools:
  - {type: function, name: lookup, file: tools.py, function: lookup}
test_cases:
  - {name: first, input: Where is order 1?, expected_tools: [lookup]}
  - {name: second, input: Where is order 2?, expected_tools: [lookup]}
"""
MARKING_TOOLS = """
from pathlib import Path

def lookup(order_id: str) -> str:
    Path(__file__).with_name("ran").touch()  # a case ran
    return "shipped"
"""


@pytest.mark.parametrize(
    ("options", "said", "hint"),
    [
        (("-o", "report.pdf"), "cannot tell the report format of 'report.pdf'", ".html"),
        (("--format", "json"), "--format json needs -o", "add -o FILE"),
        (("-o", "afile/report.html"), "cannot write the report afile/report.html", "-o path"),
        (("--record", "afile/c.yaml"), "cannot write the cassette afile/c.yaml", "--record"),
        (("-o", "same.json", "--record", "same.json"), "-o and --record both name", "two"),
        (("--record", "a.yaml", "--replay", "b.yaml"), "--record and --replay", "not both"),
        (("--case", "first", "--case", "secnd"), "--case 'secnd'", "did you mean 'second'?"),
    ],
)
def test_options_are_refused_before_any_case_runs(
    options: tuple[str, ...], said: str, hint: str, write: Write, tmp_path: Path
) -> None:
    root = write({"agent.yaml": MARKED_AGENT, "tools.py": MARKING_TOOLS})
    (tmp_path / "afile").write_text("a file, not a folder", encoding="utf-8")
    result = run("test", str(root), *options, cwd=tmp_path)
    assert result.exit_code == EXIT_CONFIG, result.output
    message, fix = result.stderr.splitlines()
    assert message.startswith("error: ") and said in message
    assert fix.startswith("hint: ") and hint in fix
    assert not (root / "ran").exists()  # refused before any case ran
    assert not (tmp_path / ".holodeck").exists() and result.stdout == ""


def test_the_same_options_run_when_they_are_right(write: Write, tmp_path: Path) -> None:
    root = write({"agent.yaml": MARKED_AGENT, "tools.py": MARKING_TOOLS})
    result = run("test", str(root), "-o", "out/new/report.junit.xml", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (root / "ran").exists() and (tmp_path / "out/new/report.junit.xml").is_file()


def test_compare_refuses_options_it_would_ignore(tmp_path: Path) -> None:
    result = run("test", "--compare", "previous", "latest", "-o", "x.html", "--repeat", "3")
    assert result.exit_code == EXIT_CONFIG
    assert "--repeat, --output would be ignored" in result.stderr
    elsewhere = run("test", str(tmp_path), "--compare", "previous", "latest")
    assert elsewhere.exit_code == EXIT_CONFIG and f"PATH ({tmp_path})" in elsewhere.stderr


def test_merge_checks_its_report_options_first(tmp_path: Path) -> None:
    result = run("test", "merge", str(tmp_path / "none.json"), "-o", "merged.txt")
    assert result.exit_code == EXIT_CONFIG
    assert "cannot tell the report format of 'merged.txt'" in result.stderr  # not the run
