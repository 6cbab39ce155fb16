"""Test cases and the workspace: each case runs in a fresh copy of the agent's workspace
(or of `workspace.from`), with `workspace.files` written in, and `expected_files` is
checked afterwards and reported in every report format. Real `holodeck test` runs, the
offline model making real file-tool calls."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from conftest import MINIMAL_AGENT, Write
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.spec.diagnostics import SpecError
from holodeck.testing.reports import render_report
from holodeck.testing.results import TestRun


def write_call(path: str, content: str) -> str:
    return "/call write_file " + json.dumps({"path": path, "content": content})


AGENT = MINIMAL_AGENT + "builtins: [files]\nworkspace: project\n"

CASES = f"""
execution: {{parallel_test_cases: 4}}
test_cases:
  - name: alpha
    workspace: {{files: {{note.txt: from alpha}}}}
    turns:
      - input: '{write_call("out.txt", "A")}'
    expected_files:
      out.txt: {{equals: A}}
      note.txt: {{equals: from alpha}}
      base.txt: {{contains: base}}
      beta.txt: {{exists: false}}
  - name: beta
    workspace: {{files: {{beta.txt: from beta, deep/er.txt: x}}}}
    turns:
      - input: '{write_call("out.txt", "B")}'
    expected_files:
      out.txt: {{equals: B}}
      deep/er.txt: {{equals: x}}
      note.txt: {{exists: false}}
  - name: from a fixture
    workspace: {{from: fixtures/small}}
    turns:
      - input: '{write_call("made.txt", "made")}'
    expected_files:
      only.txt: {{equals: fixture}}
      base.txt: {{exists: false}}
      made.txt: {{contains: mad}}
"""


def test_each_case_runs_in_its_own_copy_and_files_are_checked(write: Write, tmp_path: Path) -> None:
    root = write(
        {
            "agent.yaml": AGENT + CASES,
            "project/base.txt": "base\n",
            "fixtures/small/only.txt": "fixture",
        }
    )
    report = tmp_path / "run.json"
    result = CliRunner().invoke(
        cli, ["test", str(root / "agent.yaml"), "--model", "test", "-o", str(report)]
    )
    assert result.exit_code == 0, result.output
    run = json.loads(report.read_text())
    assert [c["status"] for c in run["cases"]] == ["pass", "pass", "pass"]
    checks = [c["runs"][0]["file_check"] for c in run["cases"]]
    assert [(c["passed"], c["checked"]) for c in checks] == [(True, 4), (True, 3), (True, 3)]
    # the agent's own workspace is left as it was
    assert sorted(p.name for p in (root / "project").iterdir()) == ["base.txt"]


FAILING = f"""
test_cases:
  - name: wrong files
    workspace: {{files: {{left.txt: stays}}}}
    turns:
      - input: '{write_call("out.txt", "written")}'
    expected_files:
      out.txt: {{contains: expected words}}
      missing.txt: {{equals: x}}
      left.txt: {{exists: false}}
"""


def test_a_file_expectation_not_met_fails_the_case_in_every_report_format(
    write: Write, tmp_path: Path
) -> None:
    root = write({"agent.yaml": AGENT + FAILING, "project/base.txt": "base\n"})
    saved = tmp_path / "run.json"
    result = CliRunner().invoke(
        cli, ["test", str(root / "agent.yaml"), "--model", "test", "-o", str(saved)]
    )
    assert result.exit_code == 1, result.output
    run = TestRun.model_validate_json(saved.read_text())
    lines = [
        "out.txt: does not contain 'expected words'",
        "missing.txt: no such file",
        "left.txt: exists, expected no such file",
    ]
    reports = {fmt: render_report(run, fmt) for fmt in ("markdown", "junit", "html")}
    for line in lines:
        assert line in result.output
        for fmt, text in reports.items():
            assert (line.replace("'", "&#39;") if fmt == "html" else line) in text, fmt
    assert run.cases[0].status == "fail"
    check = run.cases[0].runs[0].file_check
    assert check is not None and not check.passed and check.checked == 3
    assert 'type="FileMismatch"' in reports["junit"]


def test_case_workspace_keys_are_checked_where_they_are_written(write: Write) -> None:
    no_tools = MINIMAL_AGENT + "test_cases:\n  - input: hi\n    expected_files: {a.txt: {}}\n"
    root = write({"agent.yaml": no_tools})
    try:
        load_agent(root / "agent.yaml")
    except SpecError as error:
        said = str(error)
    assert "agent.yaml:" in said and "`expected_files` applies to agents with tools" in said

    bad = AGENT + (
        "test_cases:\n  - input: hi\n    workspace: {from: nowhere}\n"
        "    expected_files: {../up.txt: {exists: false}}\n"
    )
    root = write({"agent.yaml": bad, "project/base.txt": ""})
    try:
        load_agent(root / "agent.yaml")
    except SpecError as error:
        said = str(error)
    assert "workspace folder not found" in said
    assert "'..' is refused" in said
