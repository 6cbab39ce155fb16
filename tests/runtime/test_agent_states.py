"""An agent's states, as an httpx client's: unopened (made, nothing read), open, closed
(final). A `Run` is the owner that opens and closes it; `holodeck deploy`'s check builds
each agent and closes it again."""

from __future__ import annotations

import asyncio
import socket
import sys

import pytest

from cli_invoke import invoke
from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.errors import LifecycleError
from holodeck.runtime import Agent, Run
from holodeck.tools.errors import ToolLoadError

AGENT = """
name: states
model: {provider: openai, name: gpt-4o}
instructions: {inline: You help.}
tools:
  - {type: function, name: shout, file: tools.py, function: shout}
"""
TOOLS = 'def shout(text: str) -> str:\n    """Shout."""\n    return text.upper()\n'


def user_modules() -> set[str]:
    return {name for name in sys.modules if name.startswith("holodeck_user")}


def test_a_closed_agent_is_not_reopened(write: Write) -> None:
    agent = Agent(
        load_agent(write({"agent.yaml": AGENT, "tools.py": TOOLS})), RunOptions(model="test")
    )

    async def use() -> None:
        async with agent:
            assert (await agent.answer("Shout hi /call shout")).tool_calls

    asyncio.run(use())
    with pytest.raises(LifecycleError, match="agent states is closed") as refused:
        asyncio.run(use())
    assert "Agent(spec, options)" in str(refused.value.hint)  # what to do instead
    with pytest.raises(LifecycleError, match="is closed"):  # nor used without opening
        asyncio.run(agent.answer("again"))


def test_a_closed_run_is_not_reopened(write: Write) -> None:
    agent = Agent(
        load_agent(write({"agent.yaml": AGENT, "tools.py": TOOLS})), RunOptions(model="test")
    )
    run = Run(agent)

    async def use() -> None:
        async with run:
            await agent.answer("hi")

    asyncio.run(use())
    with pytest.raises(LifecycleError, match="this Run is closed"):
        asyncio.run(use())


def test_making_an_agent_imports_no_tool_code_until_it_opens(write: Write) -> None:
    broken = TOOLS + "raise RuntimeError('imported at last')\n"
    spec = load_agent(write({"agent.yaml": AGENT, "tools.py": broken}))
    before = user_modules()
    agent = Agent(spec, RunOptions(model="test"))  # no error: nothing imported yet
    assert user_modules() == before

    async def open_it() -> None:
        async with Run(agent):
            pass

    with pytest.raises(ToolLoadError, match="imported at last"):
        asyncio.run(open_it())


def test_an_agents_env_file_is_read_when_it_opens_not_when_it_is_made(write: Write) -> None:
    root = write({"agent.yaml": AGENT, "tools.py": TOOLS})
    agent = Agent(load_agent(root), RunOptions(model="test"))
    (root / ".env").write_text("STATES_GREETING=written after the agent was made\n")

    async def open_it() -> str:
        async with Run(agent):
            return (agent.options.env or {})["STATES_GREETING"]

    assert asyncio.run(open_it()) == "written after the agent was made"


def test_deploys_check_leaves_no_modules_or_import_hook_behind(write: Write) -> None:
    root = write({"agent.yaml": AGENT, "tools.py": TOOLS})
    hooks, modules = list(sys.meta_path), user_modules()
    with socket.socket() as taken:  # the port is taken: deploy stops after its checks
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = invoke(
            "deploy", str(root), "--model", "test", "--host", "127.0.0.1", "--port", port
        )
    assert result.exit_code != 0 and port in result.output, result.output
    assert list(sys.meta_path) == hooks  # the tool import hook went with the closed agent
    assert user_modules() == modules  # and its module
