"""The compatibility corpus: agents written the shipped HoloDeck's way, in its samples'
layout (agent.yaml, config.yaml, instructions/, data/), each under tests/compat/<name>/.

Each one, unchanged, validates, runs its test cases offline (`holodeck test --model
test`) and answers a question piped to `holodeck chat`: what a new user tries first.
A fixture whose config.yaml reads `${CHROMA_URL}` gets the address of a real Chroma
server (its store is really reached there); the variables a fixture's `.env.example`
lists are set to the placeholder values given there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

COMPAT = Path(__file__).parents[1] / "compat"
AGENTS = sorted(p.parent for p in COMPAT.glob("*/agent.yaml"))
HOLODECK = (sys.executable, "-m", "holodeck")
QUESTION = "What do your rules say about refunds and deposits?"
TIMEOUT = 180  # seconds a command may take on a loaded machine


@pytest.fixture(params=AGENTS, ids=[p.name for p in AGENTS])
def project(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A copy of one corpus agent (its runs and caches stay out of the repository), with
    the environment its config.yaml reads."""
    copy = tmp_path / request.param.name
    shutil.copytree(request.param, copy)
    # read by config.yaml as the samples do; the offline model never sends it
    monkeypatch.setenv("OPENAI_API_KEY", "sk-offline-never-sent")
    for name, value in example_variables(copy / ".env.example").items():
        monkeypatch.setenv(name, value)
    if "${CHROMA_URL}" in (copy / "config.yaml").read_text(encoding="utf-8"):
        monkeypatch.setenv("CHROMA_URL", request.getfixturevalue("chroma_url"))
    return copy


def example_variables(path: Path) -> dict[str, str]:
    """`NAME=value` lines of a sample's `.env.example`: the variables its files read,
    with placeholder values (never sent: the model is offline)."""
    if not path.is_file():
        return {}
    pairs = (line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines())
    return {
        name.strip(): value.strip()
        for name, *rest in pairs
        for value in rest
        if name.strip() and not name.lstrip().startswith("#")
    }


def holodeck(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HOLODECK, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ),
        timeout=TIMEOUT,
    )


def test_each_agent_validates_tests_offline_and_answers_a_piped_question(project: Path) -> None:
    validated = holodeck("validate", str(project), cwd=project.parent)
    assert validated.returncode == 0, validated.stderr
    assert "error:" not in validated.stderr

    report = project.parent / "report.json"
    tested = holodeck("test", str(project), "--model", "test", "-o", str(report), cwd=project)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    run = json.loads(report.read_text(encoding="utf-8"))
    assert run["cases"] and all(case["status"] == "pass" for case in run["cases"]), run
    assert "Traceback" not in tested.stderr

    chatted = holodeck("chat", str(project), "--model", "test", cwd=project, stdin=QUESTION)
    assert chatted.returncode == 0, chatted.stderr
    assert chatted.stdout.strip(), chatted.stderr
    assert "Traceback" not in chatted.stderr
    # no search tool of a corpus agent may fail to reach its store
    assert "unavailable" not in chatted.stderr, chatted.stderr
