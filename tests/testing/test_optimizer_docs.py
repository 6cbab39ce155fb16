"""The testing guide's optimizer example runs as written, offline (`--model test`)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from click.testing import CliRunner

from holodeck.cli.main import cli

REPO = Path(__file__).resolve().parents[2]


def test_the_optimizer_example_runs_offline(tmp_path: Path) -> None:
    page = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    section = page.split("## The optimizer", 1)[1]
    (agent,) = re.findall(r"~~~yaml\n(.*?)~~~", section, flags=re.DOTALL)
    (command,) = re.findall(r"~~~console\n\$ (.*?)\n~~~", section, flags=re.DOTALL)
    (tmp_path / "agent.yaml").write_text(agent, encoding="utf-8")
    words = command.split()
    assert words[:3] == ["holodeck", "test", "optimize"]
    previous = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, [*words[1:], "--model", "test"])
    finally:
        os.chdir(previous)
    assert result.exit_code == 0, result.output
    assert "stopped:" in result.output
    runs = [json.loads(p.read_text()) for p in (tmp_path / ".holodeck" / "runs").glob("*.json")]
    assert runs and all(any(t.startswith("optimize:") for t in r["tags"]) for r in runs)
    assert (tmp_path / "agent.yaml").read_text(encoding="utf-8") == agent
