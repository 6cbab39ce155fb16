"""A person's first hour with `holodeck test` and friends in a terminal: `--debug` where
the hints put it, a missing key's exit code, options refused before any case runs, and
failing cases that say what the agent answered and why they failed."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

import scripted_servers
from cli_invoke import invoke
from conftest import Write
from holodeck.cli.main import COMMANDS, cli
from holodeck.errors import EXIT_CONFIG
from holodeck.testing.reports import render_console
from holodeck.testing.results import TestRun
from scripted_servers import OpenAIServer, text

openai_server = scripted_servers.openai_server

TESTING_GUIDE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def guide_block(containing: str) -> list[str]:
    """The lines of the testing guide's `text` block holding `containing`, stripped."""
    blocks = re.findall(r"```text\n(.*?)```", TESTING_GUIDE.read_text(encoding="utf-8"), re.S)
    (block,) = [b for b in blocks if containing in b]
    return [line.strip() for line in block.splitlines()]


NO_KEY_AGENT = """
name: shop
model: {provider: openai, name: gpt-4o}
instructions: {inline: Help customers.}
test_cases:
  - {name: hello, input: hi}
"""


run = invoke


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


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_takes_debug_after_its_name(command: str) -> None:
    result = run(*command.split(), "--help", "--debug")
    assert result.exit_code == 0, result.output
    assert f"holodeck {command}" in result.stdout


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


def test_a_judge_without_its_key_is_refused_before_any_case_runs(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    """Else every metric it judges is an ERROR that fails no case, and the run passes."""
    root = write(
        {
            "agent.yaml": "name: judged\n"
            f"model: {{provider: openai, name: gpt-4o, endpoint: {openai_server.url}, "
            "api_key: sk-t}\ninstructions: {inline: Hi.}\n"
            "evaluations:\n  model: {provider: anthropic, name: claude-sonnet-4-5}\n"
            "  metrics: [{metric: relevance, threshold: 3}]\n"
            "test_cases:\n  - {name: hello, input: hi}\n"
        }
    )
    result = run("test", str(root), cwd=tmp_path)
    assert result.exit_code == EXIT_CONFIG, result.output
    said, hint = result.stderr.splitlines()
    assert said == "error: the judge of `relevance`: anthropic/claude-sonnet-4-5: no API key is set"
    assert hint.startswith("hint: Set ANTHROPIC_API_KEY")
    assert openai_server.requests == []  # the agent was not asked anything
    offline = run("test", str(root), "--model", "test", cwd=tmp_path)  # the offline judge
    assert offline.exit_code == 0, offline.output


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


def test_a_mistyped_case_name_is_refused_and_the_right_names_run(
    write: Write, tmp_path: Path
) -> None:
    root = write({"agent.yaml": MARKED_AGENT, "tools.py": MARKING_TOOLS})
    typo = run("test", str(root), "--case", "first", "--case", "secnd", cwd=tmp_path)
    assert typo.exit_code == EXIT_CONFIG, typo.output
    assert typo.stderr.splitlines() == [
        "error: --case 'secnd': no test case has this name",
        "hint: did you mean 'second'?",
    ]
    assert not (root / "ran").exists()  # `first` did not run alone, hiding the typo
    right = ("--case", "first", "--case", "second", "-o", "out/new/report.junit.xml")
    result = run("test", str(root), *right, cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (root / "ran").exists() and (tmp_path / "out/new/report.junit.xml").is_file()


def test_compare_refuses_options_it_would_ignore() -> None:
    result = run("test", "--compare", "previous", "latest", "-o", "x.html", "--repeat", "3")
    assert result.exit_code == EXIT_CONFIG
    assert "--repeat, --output would be ignored" in result.stderr


def test_merge_checks_its_report_options_first(tmp_path: Path) -> None:
    result = run("test", "merge", str(tmp_path / "none.json"), "-o", "merged.txt")
    assert result.exit_code == EXIT_CONFIG
    assert "cannot tell the report format of 'merged.txt'" in result.stderr  # not the run


# --- failing cases in the terminal -----------------------------------------------------


def scripted_agent(write: Write, server: OpenAIServer, cases: str) -> Path:
    return write(
        {
            "agent.yaml": "name: desk\n"
            f"model: {{provider: openai, name: gpt-4o, endpoint: {server.url}, api_key: sk-t}}\n"
            "instructions: {inline: Answer about orders.}\n"
            "tools:\n  - {type: function, name: lookup, file: tools.py, function: lookup}\n"
            "evaluations:\n  metrics: [{metric: f1_score, threshold: 0.9}]\n"
            "test_cases:\n" + cases,
            "tools.py": "def lookup(order_id: str) -> str:\n    return 'shipped'\n",
        }
    )


def wide_run(*args: str, cwd: Path) -> Result:
    previous = Path.cwd()
    os.chdir(cwd)
    try:  # as wide as a terminal, so that lines are not wrapped
        return CliRunner(env={"COLUMNS": "150"}).invoke(cli, list(args))
    finally:
        os.chdir(previous)


def test_a_failing_case_shows_its_answer_the_expected_text_and_a_diff(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    root = scripted_agent(
        write,
        openai_server,
        "  - name: where\n    input: Where is order 1042?\n"
        "    ground_truth: Order 1042 has status shipped, shipped on 2026-11-20.\n",
    )
    openai_server.script(text("Order 1042 has status delivered."))
    result = wide_run("test", str(root), "-o", "run.json", cwd=tmp_path)
    assert result.exit_code == 1, result.output
    lines = [line.strip() for line in result.stdout.splitlines()]
    assert "answer:   Order 1042 has status delivered." in lines
    assert "expected: Order 1042 has status shipped, shipped on 2026-11-20." in lines
    assert "diff:     Order 1042 has status [-shipped, shipped on 2026-11-20-]{+delivered+}." in (
        lines
    )
    assert "FAIL where: F1 below threshold 0.90" in lines  # the progress line says why
    shown = guide_block("answer:")  # the guide's example is this run's output
    assert [line for line in shown if not line.startswith("FAIL")] == [
        line for line in lines if line.startswith(("F1:", "answer:", "expected:", "diff:"))
    ]
    assert "\x1b[" not in result.output  # no colour when the output is not a terminal
    # on a terminal, the same run's diff is coloured: removed words red, added green
    out = io.StringIO()
    saved = TestRun.model_validate_json((tmp_path / "run.json").read_text(encoding="utf-8"))
    render_console(
        saved, Console(file=out, force_terminal=True, color_system="standard", width=150)
    )
    assert "\x1b[31m[-shipped, shipped on 2026-11-20-]" in out.getvalue()
    assert "\x1b[32m{+delivered+}" in out.getvalue()


def test_a_long_answer_is_cut_with_a_note_of_what_was_cut(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    root = scripted_agent(
        write,
        openai_server,
        "  - {name: policy, input: How do refunds work?, ground_truth: Refunds take 3 days.}\n",
    )
    details = " ".join(f"Detail number {i} of the refund policy." for i in range(60))
    openai_server.script(*(text("Refunds take a while. " + details) for _ in range(2)))
    result = wide_run("test", str(root), cwd=tmp_path)
    assert result.exit_code == 1, result.output
    assert "Detail number 3 of" in result.stdout and "Detail number 59" not in result.stdout
    assert re.search(r"\([\d,]+ more characters cut; -v shows the whole answer\)", result.stdout)
    diff = next(line for line in result.stdout.splitlines() if "diff:" in line)
    assert len(diff) < 400 and "more words)" in diff  # the diff is short too
    verbose = wide_run("test", str(root), "-v", cwd=tmp_path)
    assert "Detail number 59 of the refund policy." in verbose.stdout


def test_a_run_with_many_failures_ends_with_them_grouped_by_reason(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    cases = (
        "".join(
            f"  - {{name: c{i}, input: Where is order {i}?, ground_truth: Order {i} shipped.}}\n"
            for i in range(1, 5)
        )
        + "  - {name: t, input: Look order 7 up, ground_truth: shipped, expected_tools: [lookup]}\n"
    )
    root = scripted_agent(write, openai_server, cases)
    openai_server.script(*(text("I do not know.") for _ in range(4)), text("shipped"))
    result = wide_run("test", str(root), "--concurrency", "1", cwd=tmp_path)
    assert result.exit_code == 1, result.output
    tail = result.stdout.split("Failures by reason (5 cases did not pass):\n", 1)[1]
    groups = [line.strip() for line in tail.splitlines()[:2]]
    assert groups == [
        "4  F1 below threshold 0.90  (c1, c2, c3, c4)",
        "1  tools: lookup not called  (t)",
    ]
    assert guide_block("Failures by reason")[1:3] == groups  # as the guide shows it
    assert tail.splitlines()[2].startswith("5 cases, 0 passed, 5 failed")
