"""Served mode is part of how the server is built, not of who started the process: a
Claude harness agent served by `create_app` under a program's own uvicorn, or by
`holodeck mcp serve`, has its shell and file tools off unless `deployment.harness_tools`
allows them. The Claude Code CLI (the claude-agent-sdk wheel's) answers from a scripted
Anthropic Messages server on 127.0.0.1; what it offers the model is what it sends there."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripted_servers import AnthropicServer, text
from server_harness import served
from test_harness import PROBLEM, claude_agent

pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=PROBLEM or "")

SHELL_AND_FILES = {"Bash", "Read", "Write", "Edit", "Glob", "Grep", "NotebookEdit"}
CLAUDE = {"bash": {"enabled": True}, "file_system": {"read": True, "write": True}}


@pytest.fixture
def anthropic() -> Iterator[AnthropicServer]:
    s = AnthropicServer().start()
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def no_serving_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing in the environment says "served": only how the app is built does."""
    monkeypatch.delenv("HOLODECK_SERVING", raising=False)


def offered(server: AnthropicServer) -> set[str]:
    """The tools the CLI offered the model in its first request."""
    return {t["name"] for t in server.requests[0].body.get("tools", [])}


def test_create_app_under_a_plain_uvicorn_turns_the_shell_and_file_tools_off(
    tmp_path: Path, anthropic: AnthropicServer
) -> None:
    locked = claude_agent(tmp_path / "locked", anthropic, claude=CLAUDE)
    anthropic.script(text("Served without a shell."))

    with served(locked, state_dir=tmp_path / "state", model=None) as server:
        answer = server.chat("List the files").json()

    assert answer["response"] == "Served without a shell."
    assert not offered(anthropic) & SHELL_AND_FILES


def test_create_app_offers_the_shell_the_deployment_allows(
    tmp_path: Path, anthropic: AnthropicServer
) -> None:
    allowed = claude_agent(
        tmp_path / "allowed", anthropic, claude=CLAUDE, deployment={"harness_tools": ["bash"]}
    )
    anthropic.script(text("Served with a shell."))

    with served(allowed, state_dir=tmp_path / "state", model=None) as server:
        answer = server.chat("List the files").json()

    assert answer["response"] == "Served with a shell."
    assert offered(anthropic) & SHELL_AND_FILES == {"Bash"}


def test_holodeck_mcp_serve_turns_the_shell_and_file_tools_off(
    tmp_path: Path, anthropic: AnthropicServer
) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    root = claude_agent(tmp_path / "a", anthropic, claude=CLAUDE)
    anthropic.script(text("Answered over stdio without a shell."))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "holodeck", "mcp", "serve", str(root)],
        env=dict(os.environ),
    )

    async def ask() -> Any:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool("helper", {"question": "List the files"})

    result = asyncio.run(ask())

    assert not result.is_error, result.content
    assert result.structured_content["response"] == "Answered over stdio without a shell."
    assert not offered(anthropic) & SHELL_AND_FILES
