"""Controls through `holodeck chat` (a real process, questions piped in) and
`holodeck test`, with the model a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

import scripted_servers
from conftest import Write
from holodeck.cli.main import cli
from scripted_servers import OpenAIServer, server_error, text
from test_controls import agent_files, looping
from yaml_dump import dump

openai_server = scripted_servers.openai_server
HOLODECK = Path(sys.executable).parent / "holodeck"


def chat(root: Path, question: str) -> subprocess.CompletedProcess[str]:
    """One piped question, in the conversation kept in `session.json` beside the agent."""
    session = str(root / "session.json")
    return subprocess.run(
        [str(HOLODECK), "chat", str(root / "agent.yaml"), "--session", session],
        input=question,
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_chat_says_which_cap_stopped_a_tool_loop_and_goes_on(
    write: Write, openai_server: OpenAIServer
) -> None:
    root = write(agent_files(openai_server, limits={"turn": {"max_tool_calls": 2}}))
    openai_server.script(*looping(3), text("second answer"))

    stopped = chat(root, "find it")
    done = chat(root, "second question")

    assert "limits.turn.max_tool_calls" in stopped.stdout + stopped.stderr
    assert "second answer" in done.stdout
    # the stopped turn was not kept: the next request holds only the new question
    last = openai_server.requests[-1].body["messages"]
    assert [m["content"] for m in last if m["role"] == "user"] == ["second question"]


def test_chat_refuses_the_turn_after_the_session_cost_budget(
    write: Write, openai_server: OpenAIServer
) -> None:
    root = write(agent_files(openai_server, limits={"session": {"max_cost_usd": 0.1}}))
    openai_server.script(text("expensive", input_tokens=1_000_000, output_tokens=1))

    first = chat(root, "one")
    refused = chat(root, "two")

    assert "expensive" in first.stdout
    assert "has reached limits.session.max_cost_usd" in refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert len(openai_server.requests) == 1


def test_holodeck_test_reports_a_capped_case_as_an_error_naming_the_cap_and_the_answering_model(
    write: Write, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    cases = [{"name": "loops", "input": "find it"}, {"name": "answers", "input": "hi"}]
    files = agent_files(
        openai_server,
        limits={"turn": {"max_tool_calls": 2}},
        model={"fallbacks": ["backup/gpt-4o"]},
        test_cases=cases,
        execution={"max_retries": 0, "parallel_test_cases": 1},
    )
    files["config.yaml"] = dump(
        {"providers": {"backup": {"provider": "openai", "endpoint": openai_server.url}}}
    )
    root = write(files)
    openai_server.script(*looping(3), server_error(), text("from the backup"))
    report = tmp_path / "run.json"

    result = CliRunner(env={"OPENAI_API_KEY": "k"}).invoke(
        cli, ["test", str(root / "agent.yaml"), "--output", str(report)]
    )

    run = json.loads(report.read_text(encoding="utf-8"))
    cases_by_name = {c["name"]: c for c in run["cases"]}
    loops = cases_by_name["loops"]["runs"][0]
    assert loops["status"] == "error" and "limits.turn.max_tool_calls" in loops["error"]
    answers = cases_by_name["answers"]["runs"][0]
    assert answers["turns"][0]["model"] == "gpt-4o"
    assert "limits.turn.max_tool_calls" in result.output
