"""The Claude Agent SDK harness, run for real: the SDK starts the Claude Code CLI (the
native binary its wheel carries), pointed at a scripted Anthropic Messages server on
127.0.0.1. Each test starts the CLI once per turn (about 1 s each), so the cases share
turns where one turn can show several behaviours.

Skipped, saying why, when the `claude` extra is not installed or the CLI cannot start."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from holodeck import Agent, RunOptions, load_agent
from holodeck.errors import DefinitionError
from holodeck.runtime import FinalMessage, ToolCallFinished
from scripted_servers import AnthropicServer, Call, text, tool_calls
from server_harness import agent_dir, deploy_process, function_tool

REPO = Path(__file__).resolve().parents[2]
NOTES_SERVER = Path(__file__).parents[1] / "mcp_servers" / "notes.py"
WEATHER = "def get_weather(city: str) -> str:\n    '''The weather in a city.'''\n    return f'sunny in {city}'\n"


def _cli_problem() -> str | None:
    try:
        import claude_agent_sdk
    except ImportError:
        return "claude-agent-sdk is not installed (pip install 'holodeck-agents[claude]')"
    cli = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if not cli.is_file():
        return f"the SDK's wheel carries no Claude Code CLI for this platform ({cli})"
    ran = subprocess.run([str(cli), "--version"], capture_output=True, text=True, timeout=60)
    if ran.returncode != 0:
        return f"the Claude Code CLI does not start here: {ran.stderr.strip()[:200]}"
    return None


PROBLEM = _cli_problem()
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=PROBLEM or "")


@pytest.fixture
def server() -> Iterator[AnthropicServer]:
    s = AnthropicServer().start()
    yield s
    s.stop()


def claude_agent(root: Path, server: AnthropicServer, **fields: Any) -> Path:
    model = {"provider": "anthropic", "name": "claude-sonnet-4-5", "endpoint": server.root}
    return agent_dir(root, model={**model, "api_key": "x"}, **fields)


def turn(agent: Agent, *prompts: str) -> list[list[Any]]:
    async def main() -> list[list[Any]]:
        async with agent, agent.session() as session:
            return [[e async for e in session.run(p)] for p in prompts]

    return asyncio.run(main())


def finished(events: list[Any]) -> dict[str, ToolCallFinished]:
    return {e.name: e for e in events if isinstance(e, ToolCallFinished)}


def test_a_claude_agent_calls_its_python_tool_and_bash_in_its_own_directory_then_resumes(
    tmp_path: Path, server: AnthropicServer
) -> None:
    root = claude_agent(
        tmp_path / "a",
        server,
        claude={"bash": {"enabled": True}},
        tools=[function_tool("get_weather")],
        python=WEATHER,
        memory={"max_messages": 2},
    )
    server.script(
        tool_calls(Call("mcp__holodeck__get_weather", {"city": "Oslo"})),
        tool_calls(Call("Bash", {"command": "pwd > where.txt", "description": "where"})),
        text("It is sunny in Oslo."),
        text("Still sunny."),
        text("Third answer."),
    )
    first, second, third = turn(
        Agent(load_agent(root)), "Weather in Oslo?", "And now?", "One more?"
    )

    calls = finished(first)
    assert calls["get_weather"].result == "sunny in Oslo"  # ran here, through the MCP bridge
    assert calls["Bash"].ok
    answer = first[-1]
    assert isinstance(answer, FinalMessage) and answer.text == "It is sunny in Oslo."
    assert [c.name for c in answer.tool_calls] == ["get_weather", "Bash"]
    # the CLI was offered the HoloDeck tool and Bash, nothing else of its own
    offered = {t["name"] for t in server.requests[0].body["tools"]}
    assert offered == {"mcp__holodeck__get_weather", "Bash"}
    # the shell ran in a fresh directory of this session, not in the process's own
    (written,) = (root / ".holodeck" / "work").glob("*/where.txt")
    assert Path(written.read_text().strip()) == written.parent.resolve()
    assert not (Path.cwd() / "where.txt").exists()
    # the second turn resumed the CLI's session: the model saw the whole conversation
    assert isinstance(second[-1], FinalMessage) and second[-1].text == "Still sunny."
    history = json.dumps(server.requests[3].body["messages"])
    assert "Weather in Oslo?" in history and "sunny in Oslo" in history
    # memory.max_messages: 2 kept only the second turn, so the third started a new CLI
    # session given those two messages, and the first turn is gone
    assert isinstance(third[-1], FinalMessage) and third[-1].text == "Third answer."
    (asked,) = server.requests[4].body["messages"]
    context = json.dumps(asked)
    assert "And now?" in context and "Still sunny." in context and "One more?" in context
    assert "Weather in Oslo?" not in context


def test_in_default_mode_a_tool_the_agent_was_not_given_is_refused(
    tmp_path: Path, server: AnthropicServer
) -> None:
    root = claude_agent(tmp_path / "a", server, claude={"permission_mode": "default"})
    server.script(
        tool_calls(Call("Bash", {"command": "touch pwned", "description": "x"})),
        text("I may not run commands."),
        text("Still no."),
    )

    async def main() -> list[list[Any]]:
        async with Agent(load_agent(root)) as agent, agent.session() as session:
            first = [e async for e in session.run("Run touch pwned")]
            # the CLI's transcript is not here (another machine): a new CLI session
            # starts from HoloDeck's kept messages
            shutil.rmtree(root / ".holodeck" / "claude")
            return [first, [e async for e in session.run("Please?")]]

    events, again = asyncio.run(main())
    refused = finished(events)["Bash"]
    assert refused.error and not refused.ok
    assert not list(root.rglob("pwned"))
    assert "Bash" not in {t["name"] for t in server.requests[0].body["tools"]}
    assert isinstance(again[-1], FinalMessage) and again[-1].text == "Still no."
    (asked,) = server.requests[-1].body["messages"]
    assert "Run touch pwned" in json.dumps(asked) and "I may not run commands." in json.dumps(asked)


def test_a_subagent_from_claude_agents_and_a_stdio_mcp_servers_tool_are_called(
    tmp_path: Path, server: AnthropicServer
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.note").write_text("ship on friday")
    mcp = {
        "type": "mcp",
        "name": "notes",
        "command": sys.executable,
        "args": [str(NOTES_SERVER), str(notes)],
    }
    critic = {"description": "Reviews plans", "prompt": "You are the CRITIC-7 reviewer."}
    root = claude_agent(tmp_path / "a", server, claude={"agents": {"critic": critic}}, tools=[mcp])
    server.script(
        tool_calls(Call("mcp__holodeck__notes_read_note", {"name": "plan"})),
        tool_calls(
            Call("Agent", {"subagent_type": "critic", "description": "review", "prompt": "Review"})
        ),
        text("Risky but fine."),  # the critic's answer
        text("The plan ships on friday; the critic agrees."),
    )
    (events,) = turn(Agent(load_agent(root)), "What is the plan?")
    calls = finished(events)
    assert calls["notes_read_note"].result == "ship on friday"  # the server's tool, run here
    assert calls["Agent"].ok and "Risky but fine." in str(calls["Agent"].result)
    assert events[-1].text == "The plan ships on friday; the critic agrees."
    systems = [json.dumps(r.body.get("system")) for r in server.requests]
    assert any("CRITIC-7" in s for s in systems)  # the sub-agent ran with its own prompt


def holodeck(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])
    environment = {**os.environ, "PYTHONPATH": path, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "holodeck", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=180,
    )


def test_holodeck_test_checks_the_expected_tools_of_a_harness_agent(
    tmp_path: Path, server: AnthropicServer
) -> None:
    case = {"name": "oslo", "input": "Weather in Oslo?", "expected_tools": ["get_weather"]}
    # under permission_mode: default, a tool the agent was not given is refused in a run
    denied = {"name": "pwn", "input": "Run touch pwned"}
    root = claude_agent(
        tmp_path / "a",
        server,
        claude={"permission_mode": "default"},
        tools=[function_tool("get_weather")],
        python=WEATHER,
        test_cases=[case, {**case, "name": "lazy"}, denied],
        execution={"parallel_test_cases": 1},
    )
    server.script(
        tool_calls(Call("mcp__holodeck__get_weather", {"city": "Oslo"})),
        text("Sunny."),
        text("No idea."),  # the second case answers without the tool
        tool_calls(Call("Bash", {"command": "touch pwned", "description": "x"})),
        text("I may not run commands."),
    )
    report = tmp_path / "report.json"
    ran = holodeck("test", str(root), "-o", str(report))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    cases = {c["name"]: c for c in json.loads(report.read_text())["cases"]}
    assert {name: c["status"] for name, c in cases.items()} == {
        "oslo": "pass",
        "lazy": "fail",
        "pwn": "pass",
    }
    (run,) = cases["pwn"]["runs"]  # the call was made and refused: nothing ran
    assert run["failed_calls"] == 1
    (call,) = [c for turn in run["turns"] for c in turn["tool_calls"]]
    assert call["name"] == "Bash" and call["error"]
    assert not list(root.rglob("pwned"))


def test_deploy_streams_a_harness_turn_and_resumes_it_after_a_restart(
    tmp_path: Path, server: AnthropicServer
) -> None:
    root = claude_agent(
        tmp_path / "a",
        server,
        claude={"bash": {"enabled": True}},
        memory={"store": "sqlite"},
    )
    server.script(
        tool_calls(Call("Bash", {"command": "echo hi", "description": "x"})),
        text("Served."),
        text("Resumed."),
    )
    with (
        deploy_process(str(root)) as (_, url),
        httpx.stream(
            "POST", url + "/v1/chat", json={"message": "hello", "stream": True}, timeout=120
        ) as response,
    ):
        events = sse_events(response.iter_lines())
    names = [name for name, _ in events]
    assert names[0] == "session" and names[-1] == "final" and "text" in names
    # on deploy the shell is off unless deployment.harness_tools allows it: refused
    (bash,) = [data for name, data in events if name == "tool_call_finished"]
    assert bash["name"] == "Bash" and bash["error"]
    assert "Bash" not in {t["name"] for t in server.requests[0].body.get("tools", [])}
    final = events[-1][1]
    assert final["response"] == "Served."
    with deploy_process(str(root)) as (_, url):  # a new process: the SQLite store remains
        answer = httpx.post(
            url + "/v1/chat",
            json={"message": "again", "session_id": final["session_id"]},
            timeout=120,
        ).json()
    assert answer["response"] == "Resumed."
    history = json.dumps(server.requests[-1].body["messages"])
    assert "hello" in history and "Served." in history


def sse_events(lines: Iterator[str]) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    name = ""
    for line in lines:
        if line.startswith("event:"):
            name = line.partition(":")[2].strip()
        elif line.startswith("data:"):
            events.append((name, json.loads(line.partition(":")[2])))
    return events


IMAGE = {
    "spec_version": 1,
    "name": "lead",
    "executor": {"model": "anthropic/claude-sonnet-4-5", "config": {"harness": "claude-sdk"}},
    "tools": {"agents": ["coder"]},
}
CODER = {
    "spec_version": 1,
    "name": "coder",
    "executor": {"model": "anthropic/claude-sonnet-4-5", "config": {"harness": "codex"}},
}


def image(root: Path) -> Path:
    (root / "agents" / "coder").mkdir(parents=True)
    (root / "config.yaml").write_text(yaml.safe_dump(IMAGE))
    (root / "AGENTS.md").write_text("You lead.")
    (root / "agents" / "coder" / "config.yaml").write_text(yaml.safe_dump(CODER))
    (root / "agents" / "coder" / "AGENTS.md").write_text("You code.")
    (root / "tests").mkdir()
    case = {"name": "delegates", "input": "Ask the coder.", "expected_tools": ["coder"]}
    (root / "tests" / "smoke.yaml").write_text(yaml.safe_dump({"test_cases": [case]}))
    return root


def test_an_image_with_codex_subagents_needs_harness_none_and_then_runs(tmp_path: Path) -> None:
    root = image(tmp_path / "img")
    spec = load_agent(root)
    assert spec.harness == "claude-sdk" and spec.subagents["coder"].harness == "codex"
    env = {**os.environ, "ANTHROPIC_API_KEY": "x"}
    with pytest.raises(DefinitionError, match="--harness none"):
        Agent(
            spec, RunOptions(env={k: v for k, v in env.items() if k != "HOLODECK_HARNESS"})
        ).prepare()
    refused = holodeck("test", str(root), "--model", "test", env={"ANTHROPIC_API_KEY": "x"})
    assert refused.returncode == 2 and "harness `codex`" in refused.stderr
    assert "--harness none" in refused.stderr
    ran = holodeck(
        "test", str(root), "--model", "test", "--harness", "none", env={"ANTHROPIC_API_KEY": "x"}
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr  # the offline model called the coder
    assert "dropped: its built-in tools" in ran.stderr
    answer = asyncio.run(
        Agent(spec, RunOptions(model="test", env={**env, "HOLODECK_HARNESS": "none"})).answer(
            "Ask the coder. /call coder"
        )
    )
    assert [c.name for c in answer.tool_calls] == ["coder"]


def test_a_non_claude_model_override_needs_harness_none(tmp_path: Path) -> None:
    root = agent_dir(
        tmp_path / "a",
        model={"provider": "anthropic", "name": "claude-sonnet-4-5", "api_key": "x"},
        claude={},
    )
    spec = load_agent(root)
    with pytest.raises(DefinitionError, match="needs a Claude model"):
        Agent(spec, RunOptions(model="test", env={})).prepare()
    answer = asyncio.run(
        Agent(spec, RunOptions(model="test", env={"HOLODECK_HARNESS": "none"})).answer("hi")
    )
    assert answer.text
