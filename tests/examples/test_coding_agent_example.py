"""examples/coding-agent runs offline as the README says: `holodeck test
examples/coding-agent --model test` reads the project, runs its tests in the sandbox
(failing), fixes the bug, runs them again (passing), and its expected_files hold; the
example's own project is left as shipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from holodeck.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding-agent"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_the_coding_agent_example_fixes_its_project_offline(tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in (EXAMPLE / "project").iterdir()}
    report = tmp_path / "run.json"
    result = CliRunner().invoke(cli, ["test", str(EXAMPLE), "--model", "test", "-o", str(report)])
    assert result.exit_code == 0, result.output
    run = json.loads(report.read_text())
    fixed, looked = run["cases"]
    assert [fixed["status"], looked["status"]] == ["pass", "pass"]
    calls = [c for t in fixed["runs"][0]["turns"] for c in t["tool_calls"]]
    assert [c["name"] for c in calls] == ["read_file", "shell", "edit_file", "shell"]
    assert "return a - b" in calls[0]["result"]
    assert "FAILED (failures=2)" in calls[1]["result"]  # the sandboxed tests ran and failed
    assert calls[3]["result"].rstrip().endswith("OK")
    assert fixed["runs"][0]["file_check"] == {"passed": True, "checked": 2, "problems": []}
    assert {p.name: p.read_bytes() for p in (EXAMPLE / "project").iterdir()} == before
