"""Tools that act, declared in agent.yaml (`builtins:`, `sandbox:`, `workspace:`) and in
images (`tools.builtins`, Omnigent's `os_env` and `terminals`), offered to the model by
the runtime: real tool calls from the offline model run real commands in bubblewrap."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from cli_invoke import invoke
from conftest import MINIMAL_AGENT, Write
from holodeck import Agent, FinalMessage, RunOptions, load_agent
from holodeck.spec.diagnostics import SpecError
from processes import running

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sandbox)"
)

IMAGE = "spec_version: 1\nname: om\nprompt: You code.\nexecutor: {model: openai/gpt-4o-mini}\n"


def errors_of(root: Path) -> str:
    with pytest.raises(SpecError) as caught:
        load_agent(root)
    return str(caught.value)


async def answer(agent: Agent, *prompts: str) -> list[FinalMessage]:
    finals = []
    async with agent.session() as session:
        for prompt in prompts:
            finals.append(await session.answer(prompt))
    return finals


# --- agent.yaml -------------------------------------------------------------------------


def test_agent_yaml_builtins_give_web_and_acting_tools(write: Write) -> None:
    root = write(
        {
            "agent.yaml": MINIMAL_AGENT
            + "builtins: [web_fetch, files, shell, code, terminals]\n"
            + "sandbox: {type: bwrap, write_paths: [out]}\nworkspace: project\n",
            "project/a.txt": "x",
            "out/.keep": "",
        }
    )
    spec = load_agent(root / "agent.yaml")
    assert [b.name for b in spec.builtins] == ["web_fetch"]
    assert spec.workspace is not None
    assert spec.workspace.tools == ("files", "shell", "code", "terminals")
    assert spec.workspace.sandbox.type == "bwrap" and spec.workspace.path == "project"


def test_validate_lists_the_acting_tools_among_those_offered(write: Write) -> None:
    root = write({"agent.yaml": MINIMAL_AGENT + "builtins: [shell, code]\n"})
    result = invoke("validate", str(root))
    assert result.exit_code == 0, result.output
    assert "tools offered: run_python, shell" in result.output


def test_agent_yaml_sandbox_without_acting_tools_is_an_error(write: Write) -> None:
    root = write({"agent.yaml": MINIMAL_AGENT + "builtins: [web_fetch]\nsandbox: {type: none}\n"})
    says = errors_of(root / "agent.yaml")
    assert "agent.yaml:" in says and "`sandbox` applies to the tools that act" in says


def test_agent_yaml_web_search_needs_a_provider_off_openai(write: Write) -> None:
    body = MINIMAL_AGENT.replace("provider: openai", "provider: anthropic").replace(
        "gpt-4o-mini", "claude-sonnet-4-5"
    )
    root = write({"agent.yaml": body + "builtins: [web_search]\n"})
    assert "web_search needs `search_provider`" in errors_of(root / "agent.yaml")


def test_agent_yaml_missing_workspace_folder_is_an_error(write: Write) -> None:
    root = write({"agent.yaml": MINIMAL_AGENT + "builtins: [files]\nworkspace: nowhere\n"})
    assert "workspace folder not found" in errors_of(root / "agent.yaml")


# --- images and Omnigent's forms ----------------------------------------------------------


def test_omnigent_os_env_and_terminals_load_into_the_workspace(write: Write) -> None:
    root = write(
        {
            "config.yaml": IMAGE
            + "os_env:\n  type: caller_process\n  cwd: .\n  sandbox:\n    type: linux_bwrap\n"
            + "    allow_network: true\n"
            + "terminals:\n  shell: {command: bash}\n"
            + "tools:\n  builtins: [code]\n",
        }
    )
    spec = load_agent(root)
    assert spec.workspace is not None
    assert spec.workspace.tools == ("files", "shell", "terminals", "code")
    assert spec.workspace.sandbox.type == "bwrap"
    assert spec.workspace.sandbox.allow_network is True
    assert spec.workspace.terminals["shell"].command == "bash"


@pytest.mark.parametrize(
    ("block", "says"),
    [
        (
            "os_env:\n  type: caller_process\n  sandbox: {type: windows_jobobject}\n",
            "sandbox type `windows_jobobject` is not offered",
        ),
        ("os_env:\n  type: remote_vm\n", "os_env type `remote_vm` is not offered"),
        ("terminals:\n  shell: {command: bash, rows: 40}\n", "rows"),
        ("timers: true\n", "does not offer these tools"),
        ("spawn: true\n", "does not offer these tools"),
    ],
)
def test_omnigent_forms_asking_for_what_is_not_offered_are_errors(
    write: Write, block: str, says: str
) -> None:
    root = write({"config.yaml": IMAGE + block})
    message = errors_of(root)
    assert "config.yaml:" in message and says in message


# --- the runtime: real calls in the sandbox ---------------------------------------------


@needs_bwrap
def test_offline_model_runs_shell_and_file_tools_in_the_workspace(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write(
        {
            "agent.yaml": MINIMAL_AGENT + "builtins: [files, shell]\nworkspace: project\n",
            "project/calc.py": "def add(a, b):\n    return a - b\n",
        }
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-sandbox")
    agent = Agent(load_agent(root / "agent.yaml"), RunOptions(model="test"))
    shell = '/call shell {"command": "cat calc.py; echo made > made.txt; echo $OPENAI_API_KEY"}'
    edit = '/call edit_file {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}'
    outside = '/call read_file {"path": "../agent.yaml"}'

    async def go() -> list[FinalMessage]:
        async with agent:
            return await answer(agent, shell, edit, outside)

    ran, edited, refused = asyncio.run(go())
    (call,) = ran.tool_calls
    assert call.name == "shell" and "return a - b" in str(call.result)
    assert "sk-not-for-the-sandbox" not in str(call.result)
    assert (root / "project" / "made.txt").read_text() == "made\n"
    assert (root / "project" / "calc.py").read_text().endswith("return a + b\n")
    assert edited.tool_calls[0].result == "edited calc.py"
    assert "`..` is refused" in str(refused.tool_calls[0].result)


@needs_bwrap
def test_terminals_are_closed_with_the_session(write: Write) -> None:
    root = write({"agent.yaml": MINIMAL_AGENT + "builtins: [terminals]\n"})
    agent = Agent(load_agent(root / "agent.yaml"), RunOptions(model="test"))
    marker = "8642.125"

    def still_running() -> bool:
        return bool(running(marker))

    async def go() -> tuple[bool, bool]:
        async with agent, agent.session() as session:
            await session.answer('/call terminal_open {"name": "t"}')
            write_call = {"name": "t", "text": f"sleep {marker} &", "enter": True}
            await session.answer(f"/call terminal_write {json.dumps(write_call)}")
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 10
            while not still_running() and loop.time() < deadline:
                await asyncio.sleep(0.05)
            started = still_running()
        return started, still_running()

    started, after = asyncio.run(go())
    assert started and not after
