"""`--harness none` is an option of the run, carried by `RunOptions` and, for a server,
by how its app is built: nothing is written to the process environment, and a served
worker process gets it from the options it was started with. The agents here ask for
harnesses the run cannot give (an image whose sub-agent uses `codex`), so only the
option lets them run; the offline model plays the Claude one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from cli_invoke import invoke
from server_harness import agent_dir, deploy_process, function_tool, served

LEAD = {
    "spec_version": 1,
    "name": "lead",
    "executor": {"model": "anthropic/claude-sonnet-4-5", "config": {"harness": "claude-sdk"}},
    "tools": {"agents": ["coder"]},
}
WEATHER = 'def get_weather(city: str) -> str:\n    """The weather."""\n    return \'sunny\'\n'
ASK = "Weather in Oslo? /call get_weather"
CODER = {
    "spec_version": 1,
    "name": "coder",
    "executor": {"model": "anthropic/claude-sonnet-4-5", "config": {"harness": "codex"}},
}


@pytest.fixture(autouse=True)
def no_harness_variable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The variable is absent before each test; whatever a test left is removed after."""
    monkeypatch.delenv("HOLODECK_HARNESS", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unused")
    yield
    os.environ.pop("HOLODECK_HARNESS", None)


def image(root: Path) -> Path:
    (root / "agents" / "coder").mkdir(parents=True)
    (root / "config.yaml").write_text(yaml.safe_dump(LEAD))
    (root / "AGENTS.md").write_text("You lead.")
    (root / "agents" / "coder" / "config.yaml").write_text(yaml.safe_dump(CODER))
    (root / "agents" / "coder" / "AGENTS.md").write_text("You code.")
    (root / "tests").mkdir()
    case = {"name": "delegates", "input": "Ask the coder.", "expected_tools": ["coder"]}
    (root / "tests" / "smoke.yaml").write_text(yaml.safe_dump({"test_cases": [case]}))
    return root


def test_holodeck_test_with_harness_none_leaves_the_environment_alone(tmp_path: Path) -> None:
    root = image(tmp_path / "img")

    refused = invoke("test", str(root), "--model", "test")
    assert refused.exit_code == 2 and "--harness none" in refused.output

    ran = invoke("test", str(root), "--model", "test", "--harness", "none")

    assert ran.exit_code == 0, ran.output  # the offline model called the coder
    assert "HOLODECK_HARNESS" not in os.environ
    # the option was this run's only: the next run without it is refused again
    again = invoke("test", str(root), "--model", "test")
    assert again.exit_code == 2 and "--harness none" in again.output


def test_the_documented_variable_is_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = image(tmp_path / "img")
    monkeypatch.setenv("HOLODECK_HARNESS", "none")

    ran = invoke("test", str(root), "--model", "test")

    assert ran.exit_code == 0, ran.output


def test_an_app_built_with_harness_none_runs_the_harness_agent_in_its_own_loop(
    tmp_path: Path,
) -> None:
    root = image(tmp_path / "img")

    with served(root, state_dir=tmp_path / "state", harness="none") as server:
        answer = server.chat("Ask the coder. /call coder").json()

    assert [call["name"] for call in answer["tool_calls"]] == ["coder"]
    assert "HOLODECK_HARNESS" not in os.environ


def test_deploy_workers_get_harness_none_from_their_options(tmp_path: Path) -> None:
    # a Claude harness agent, which the offline model cannot play inside the harness
    root = agent_dir(
        tmp_path / "a",
        model={"provider": "anthropic", "name": "claude-sonnet-4-5", "api_key": "unused"},
        claude={},
        memory={"store": "sqlite"},
        tools=[function_tool("get_weather")],
        python=WEATHER,
    )

    args = (str(root), "--model", "test", "--harness", "none", "--workers", "2")
    with deploy_process(*args, cwd=tmp_path) as (_, url):
        answers = [
            httpx.post(url + "/v1/chat", json={"message": ASK}, timeout=60).json()
            for _ in range(4)  # likely to reach both workers
        ]

    for answer in answers:
        assert [call["name"] for call in answer["tool_calls"]] == ["get_weather"], answer
