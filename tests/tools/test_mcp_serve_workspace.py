"""`holodeck mcp serve` over stdio acts where `holodeck chat` does: one client (the
desktop assistant that started it) is one user, so every conversation it opens works in
the agent's own workspace (`workspace:`), not in a folder per session as a server's
conversations do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import MINIMAL_AGENT, Write
from test_serve_mcp import run, stdio_client


def test_stdio_conversations_share_the_agents_workspace(write: Write, tmp_path: Path) -> None:
    root = write(
        {
            "agent.yaml": MINIMAL_AGENT.replace("name: demo", "name: coder")
            + "builtins: [files]\nworkspace: project\n",
            "project/readme.txt": "hello",
        }
    )
    written = json.dumps({"path": "notes/today.txt", "content": "from the first"})

    async def use() -> tuple[Any, Any]:
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with stdio_client(str(root), "--model", "test", errlog=errlog) as session:
                first = await session.call_tool(
                    "coder", {"question": f"/call write_file {written}"}
                )
                other = await session.call_tool(
                    "coder", {"question": '/call read_file {"path": "notes/today.txt"}'}
                )
                return first, other

    first, other = run(use())
    assert not first.is_error and not other.is_error
    assert first.structured_content["session_id"] != other.structured_content["session_id"]
    assert (root / "project" / "notes" / "today.txt").read_text() == "from the first"
    (read,) = other.structured_content["tool_calls"]
    assert read["result"] == "from the first"
    assert not (root / ".holodeck").exists()  # no folder per session
