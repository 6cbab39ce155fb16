"""Long-term memory in test cases: `memories:` seeded for the case's own user,
`expected_memories:` checked after it and reported in every format, and a simulated user
who comes back in `sessions:` (each a new session of the same user), judged by
`knowledge_retention` across them. The agent, the user and the judge are scripted
OpenAI-compatible servers (real openai SDK over real HTTP); memories live in the embedded
store on disk."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import scripted_servers
from conftest import Write
from holodeck.cli.main import cli
from holodeck.llm.offline_script import USER_TOOL
from holodeck.testing.metrics.conversation import NEW_SESSION
from holodeck.testing.metrics.judge import JUDGE_TOOL
from holodeck.testing.reports import render_report
from holodeck.testing.results import TestRun
from scripted_servers import Call, EmbeddingsServer, OpenAIServer, Reply, text, tool_calls
from yaml_dump import dump

openai_server = scripted_servers.openai_server
embeddings_server = scripted_servers.embeddings_server


@pytest.fixture
def user_server() -> Iterator[OpenAIServer]:
    server = OpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def judge_server() -> Iterator[OpenAIServer]:
    server = OpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


def model(server: OpenAIServer, name: str) -> dict[str, Any]:
    return {"provider": "openai", "name": name, "endpoint": server.url, "api_key": "sk-test"}


def project(
    write: Write,
    agent: OpenAIServer,
    embeddings: EmbeddingsServer,
    case: dict[str, Any],
    *,
    evaluations: dict[str, Any] | None = None,
    long_term: dict[str, Any] | None = None,
) -> Path:
    data: dict[str, Any] = {
        "name": "helper",
        "model": model(agent, "agent-model"),
        "embedding_provider": {
            "provider": "openai",
            "name": "text-embedding-3-small",
            "endpoint": embeddings.url,
            "api_key": "sk-embed",
        },
        "instructions": {"inline": "Help the user; keep what matters with remember."},
        "test_cases": [{"name": "snacks", **case}],
    }
    if long_term is not None:
        data["memory"] = {"long_term": long_term}
    if evaluations is not None:
        data["evaluations"] = evaluations
    return write({"agent.yaml": dump(data)})


def run(root: Path, *args: str) -> tuple[Result, dict[str, Any]]:
    """`holodeck test` in the agent's directory; the result and its JSON report."""
    previous = Path.cwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(cli, ["test", ".", "-o", "report.json", *args])
    finally:
        os.chdir(previous)
    report = root / "report.json"
    return result, json.loads(report.read_text()) if report.is_file() else {}


def first_run(report: dict[str, Any]) -> dict[str, Any]:
    (case,) = report["cases"]
    found: dict[str, Any] = case["runs"][0]
    return found


def users_memories(root: Path, user: str = "local") -> str:
    listed = CliRunner().invoke(cli, ["memory", "list", str(root), "--user", user])
    assert listed.exit_code == 0, listed.output
    return listed.output


RECALL = {"recall": {"auto": True}}


def test_seeded_memories_reach_the_turn_and_expected_memories_are_checked_after_it(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    openai_server.script(
        tool_calls(Call("remember", {"fact": "The user drinks oolong tea"})),
        text("Try dried apricots with your tea."),
    )
    case = {
        "input": "Suggest a snack for the afternoon.",
        "memories": ["The user is allergic to peanuts"],
        "expected_memories": {
            "contains": ["allergic to PEANUTS", {"regex": r"drinks \w+ tea"}],
            "not_contains": ["coffee"],
        },
    }
    root = project(write, openai_server, embeddings_server, case, long_term=RECALL)
    result, report = run(root)
    assert result.exit_code == 0, result.output
    first = openai_server.bodies()[0]
    assert "The user is allergic to peanuts" in json.dumps(first["messages"])
    checked = first_run(report)["memory_check"]
    assert checked["passed"] is True and checked["checked"] == 3
    assert checked["remembered"] == [
        "The user is allergic to peanuts",
        "The user drinks oolong tea",
    ]
    # the case ran as a user of its own, whose memories (and their folder) went with it
    assert list((root / ".holodeck" / "memory").glob("mem_*")) == []
    assert "allergic" not in users_memories(root)


def test_memories_not_as_expected_fail_the_case_in_every_report_format(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    openai_server.script(text("Try popcorn."))
    case = {
        "input": "Suggest a snack.",
        "memories": ["The user is allergic to peanuts"],
        "expected_memories": {"contains": ["tea"], "not_contains": [{"regex": "pea+nuts"}]},
    }
    root = project(write, openai_server, embeddings_server, case, long_term=RECALL)
    result, report = run(root)
    assert result.exit_code == 1, result.output
    problems = [
        "no memory contains 'tea'",
        "a memory matches /pea+nuts/: The user is allergic to peanuts",
    ]
    assert first_run(report)["memory_check"]["problems"] == problems
    assert first_run(report)["status"] == "fail"
    assert "Memories:" in result.output and "no memory contains 'tea'" in result.output
    saved = TestRun.model_validate(report)
    junit = render_report(saved, "junit")
    assert 'type="MemoryMismatch"' in junit and "no memory contains 'tea'" in junit
    assert "**Memories**: ✗" in render_report(saved, "markdown")
    html = render_report(saved, "html")
    assert "Memories" in html and "a memory matches /pea+nuts/" in html


def test_a_case_with_memories_on_an_agent_without_long_term_memory_is_an_error_saying_what_to_add(
    write: Write, openai_server: OpenAIServer, embeddings_server: EmbeddingsServer
) -> None:
    case = {"input": "Hi", "memories": ["The user is called Ada"]}
    root = project(write, openai_server, embeddings_server, case)
    result, report = run(root)
    assert result.exit_code != 0
    run_ = first_run(report)
    assert run_["status"] == "error"
    assert "no long-term memory" in run_["error"]
    assert "memory: {long_term: {}}" in run_["error"]
    assert openai_server.bodies() == []  # the agent was never asked


def say(message: str) -> Reply:
    return tool_calls(Call(USER_TOOL, {"action": "message", "message": message}))


def stop(explanation: str) -> Reply:
    arguments = {"action": "stop", "reason": "goal_met", "explanation": explanation}
    return tool_calls(Call(USER_TOOL, arguments))


def test_a_simulated_user_comes_back_in_a_new_session_and_retention_is_judged_across_both(
    write: Write,
    openai_server: OpenAIServer,
    embeddings_server: EmbeddingsServer,
    user_server: OpenAIServer,
    judge_server: OpenAIServer,
) -> None:
    openai_server.script(
        tool_calls(Call("remember", {"fact": "The user is vegetarian"})),
        text("Noted: vegetarian."),
        text("A mushroom risotto, since you are vegetarian."),
    )
    user_server.script(
        stop("It knows."),  # session 1 ends after its first message (first_message)
        say("What should I cook tonight?"),
        stop("It remembered."),
    )
    judge_server.script(tool_calls(Call(JUDGE_TOOL, {"reason": "kept it", "score": 1.0})))
    case = {
        "simulate": {
            "persona": "A home cook.",
            "goal": "Get a dinner idea that fits how they eat.",
            "sessions": [
                {"first_message": "I am vegetarian."},
                {"plan": ["Ask what to cook tonight"]},
            ],
        },
        "evaluations": [{"metric": "knowledge_retention", "threshold": 0.5}],
    }
    evaluations = {
        "model": model(judge_server, "judge"),
        "user_model": model(user_server, "u"),
        "metrics": [{"metric": "bleu", "enabled": False}],  # the case's own metric runs
    }
    root = project(
        write,
        openai_server,
        embeddings_server,
        case,
        evaluations=evaluations,
        long_term=RECALL,
    )
    result, report = run(root)
    assert result.exit_code == 0, result.output
    ran = first_run(report)
    assert [t["session"] for t in ran["turns"]] == [0, 1]
    assert ran["simulation"]["stopped"] == "goal_met"
    # the second session starts without the first's history, with the memory recalled
    second = json.dumps(openai_server.bodies()[2]["messages"])
    assert "I am vegetarian." not in second and "The user is vegetarian" in second
    assert "conversation 2" in json.dumps(user_server.bodies()[1]["messages"])
    judged = json.dumps(judge_server.bodies()[0]["messages"])
    assert NEW_SESSION in judged
    assert judged.index("I am vegetarian.") < judged.index(NEW_SESSION)
    assert judged.index(NEW_SESSION) < judged.index("What should I cook tonight?")
    (metric,) = ran["metrics"]
    assert metric["name"] == "knowledge_retention" and metric["status"] == "pass"


def test_the_memory_assistant_example_remembers_across_two_sessions_and_forgets_on_request(
    tmp_path: Path,
) -> None:
    example = tmp_path / "memory-assistant"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "memory-assistant", example)
    result, report = run(example, "--model", "test")
    assert result.exit_code == 0, result.output
    runs = {case["name"]: case["runs"][0] for case in report["cases"]}
    across = runs["remembers across two sessions"]
    assert [t["session"] for t in across["turns"]] == [0, 1]
    (recalled,) = across["turns"][1]["tool_calls"]  # the second session finds the first's fact
    assert "The user drinks oolong tea and never coffee." in recalled["result"]
    assert across["memory_check"]["passed"]
    forgot = runs["forgets on request"]
    assert [c["name"] for c in forgot["turns"][0]["tool_calls"]] == ["recall", "forget"]
    assert forgot["memory_check"]["remembered"] == ["The user works from the Lyon office."]
