"""An Omnigent-shaped image (`os_env` with a bubblewrap sandbox, `terminals`) on a real
HTTP model: the scripted OpenAI-compatible server asks for a shell call and terminal
calls, the openai SDK carries them, and the commands run in bubblewrap, their results
going back to the model."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

import scripted_servers
from conftest import Write
from holodeck import Agent, RunOptions, load_agent
from scripted_servers import Call, OpenAIServer, text, tool_calls

openai_server = scripted_servers.openai_server

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sandbox)"
)


def image(server: OpenAIServer) -> str:
    return (
        "spec_version: 1\nname: omni-coder\nprompt: You work in a shell.\n"
        "executor:\n  model: openai/gpt-4o-mini\n"
        f"  auth: {{type: api_key, base_url: '{server.url}', api_key: sk-scripted}}\n"
        "os_env:\n  type: caller_process\n  cwd: work\n"
        "  sandbox: {type: linux_bwrap, write_paths: [out]}\n"
        "terminals:\n  shell: {command: bash}\n"
    )


def test_a_scripted_model_runs_shell_and_terminal_calls_in_bubblewrap(
    write: Write, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write({"config.yaml": image(openai_server), "work/note.txt": "a note", "out/.keep": ""})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-key")
    command = (
        "cat note.txt; echo; echo made > made.txt; echo out > ../out/o.txt; "
        "touch ../escaped.txt; touch /usr/escaped 2>&1 | grep -o 'Read-only file system'; "
        'echo "key=[$OPENAI_API_KEY]"; ls -A "$HOME" | wc -l'
    )
    openai_server.script(
        tool_calls(Call("shell", {"command": command}, id="c1")),
        tool_calls(Call("terminal_open", {"name": "shell"}, id="c2")),
        tool_calls(
            Call("terminal_write", {"name": "shell", "text": "X=6; echo $((X*7))"}, id="c3")
        ),
        tool_calls(Call("terminal_read", {"name": "shell", "wait": 2}, id="c4")),
        text("Done."),
    )
    agent = Agent(load_agent(root), RunOptions())

    async def go() -> str:
        async with agent, agent.session() as session:
            return (await session.answer("Look at the note, then count in a terminal.")).text

    assert asyncio.run(go()) == "Done."
    sent = [json.loads(json.dumps(r.body)) for r in openai_server.requests]
    told = [s["messages"][-1] for s in sent[1:]]
    assert all(m["role"] == "tool" for m in told)
    shell_said = told[0]["content"]
    assert "exit code 0" in shell_said and "a note" in shell_said
    assert "Read-only file system" in shell_said  # the system is read-only
    assert "key=[]" in shell_said and "sk-host-key" not in shell_said
    assert shell_said.rstrip().endswith("0")  # the home folder is empty in the sandbox
    assert "42" in told[3]["content"]  # the terminal kept X between calls
    assert (root / "work" / "made.txt").read_text() == "made\n"
    assert (root / "out" / "o.txt").read_text() == "out\n"
    assert not (root / "escaped.txt").exists()  # the sandbox's own /tmp took it
    assert not Path("/usr/escaped").exists()
    # the model was offered the image's acting tools over the wire
    offered = {t["function"]["name"] for t in sent[0]["tools"]}
    assert {"shell", "read_file", "terminal_open"} <= offered
