"""`holodeck memory list|export|delete`: a user's memories read from the agent's embedded
store on disk, seeded by the agent's own `remember` tool in an offline run."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from cli_invoke import invoke
from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, FinalMessage, RunOptions

AGENT = """
name: keeper
model: {provider: test}
instructions: {inline: Keep notes.}
memory:
  long_term: {}
"""


def remember(root: Path, user: str | None, *facts: str) -> None:
    async def run() -> None:
        async with Agent(load_agent(root), RunOptions(model="test")) as agent:
            for fact in facts:
                session = agent.session()
                session.user = user
                said = ""
                async for event in session.run(f'/call remember {{"fact": "{fact}"}}'):
                    if isinstance(event, FinalMessage):
                        said = event.text
                await session.aclose()
                assert fact in said, said  # the offline model answers from the tool's result

    asyncio.run(run())


def test_list_export_and_delete_a_users_memories(write: Write, tmp_path: Path) -> None:
    root = write({"agent.yaml": AGENT})
    remember(root, None, "Likes rye bread", "Walks to work")
    remember(root, "ops/u7", "Works nights")

    listed = invoke("memory", "list", str(root))
    assert listed.exit_code == 0, listed.output
    assert "Likes rye bread" in listed.output and "Walks to work" in listed.output
    assert "Works nights" not in listed.output
    other = invoke("memory", "list", str(root), "--user", "ops/u7")
    assert "Works nights" in other.output and "rye" not in other.output

    target = tmp_path / "local.json"
    exported = invoke("memory", "export", str(root), "-o", str(target))
    assert exported.exit_code == 0, exported.output
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["agent"] == "keeper" and data["user"] == "local"
    assert sorted(m["text"] for m in data["memories"]) == ["Likes rye bread", "Walks to work"]
    first = data["memories"][0]["id"]

    one = invoke("memory", "delete", str(root), "--id", first, "--yes")
    assert one.exit_code == 0 and "deleted 1 memory of local" in one.output
    missing = invoke("memory", "delete", str(root), "--id", first, "--yes")
    assert missing.exit_code != 0 and "has no memory" in missing.output
    assert "Traceback" not in missing.output
    everything = invoke("memory", "delete", str(root), "--yes")
    assert "deleted 1 memory of local" in everything.output
    assert "no memories of local" in invoke("memory", "list", str(root)).output
    assert "Works nights" in invoke("memory", "list", str(root), "--user", "ops/u7").output


def test_an_agent_without_long_term_memory_says_how_to_add_it(write: Write) -> None:
    root = write({"agent.yaml": AGENT.replace("memory:\n  long_term: {}\n", "")})
    result = invoke("memory", "list", str(root))
    assert result.exit_code != 0
    assert "keeps no long-term memories" in result.output and "memory.long_term" in result.output
    assert "Traceback" not in result.output


def test_validate_lists_the_memory_tools_among_those_offered(write: Write) -> None:
    root = write({"agent.yaml": AGENT})
    result = invoke("validate", str(root))
    assert result.exit_code == 0, result.output
    assert "tools offered: forget, recall, remember" in result.output


def test_the_memory_assistant_example_runs_offline_and_keeps_what_it_was_told(
    tmp_path: Path,
) -> None:
    example = tmp_path / "memory-assistant"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "memory-assistant", example)
    ran = invoke("test", str(example), "--model", "test", cwd=tmp_path)
    assert ran.exit_code == 0, ran.output
    assert "3 passed" in ran.output
    listed = invoke("memory", "list", str(example), "--model", "test")
    assert "The user drinks oolong tea and never coffee." in listed.output
