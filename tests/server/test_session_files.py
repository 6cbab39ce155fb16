"""`holodeck chat --session FILE`: a damaged file is a clear error naming it, another
agent's file is refused unless adopted, and chats sharing one file take turns, so no
turn is lost (real `holodeck chat` processes)."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart

from conftest import Write
from server_harness import until

AGENT = """
name: {name}
model: {{provider: test}}
instructions: {{inline: You find things.}}
tools:
  - {{type: function, name: lookup, file: tools.py, function: lookup}}
"""
LOOKUP = '''
def lookup(query: str) -> str:
    """Look something up."""
    return "found " + query
'''
# Each call notes itself in `calls`, then answers once `release` exists beside it.
HOLDING = '''
import time
from pathlib import Path

def lookup(query: str) -> str:
    """Look something up."""
    here = Path(__file__).parent
    with open(here / "calls", "a") as calls:
        calls.write("call\\n")
    deadline = time.monotonic() + 60
    while not (here / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return "found " + query
'''


COMMAND = (sys.executable, "-m", "holodeck", "chat")


def chat(root: Path, *args: str, question: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, str(root), "--model", "test", *args],
        input=question,
        capture_output=True,
        text=True,
        timeout=120,
    )


def prompts_in(session: Path) -> list[str]:
    messages = ModelMessagesTypeAdapter.validate_python(
        json.loads(session.read_bytes())["messages"]
    )
    return [
        str(part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]


def test_a_deeply_nested_session_file_is_a_clear_error(write: Write, tmp_path: Path) -> None:
    root = write({"agent.yaml": AGENT.format(name="finder"), "tools.py": LOOKUP})
    session = tmp_path / "deep.json"
    session.write_text("[" * 100_000 + "]" * 100_000)
    done = chat(root, "--session", str(session), question="hi")
    assert done.returncode == 2, done.stderr
    assert f"error: {session}: not a chat session (its JSON nests too deeply)" in done.stderr
    assert "Traceback" not in done.stderr


def test_another_agents_session_is_refused_unless_adopted(write: Write, tmp_path: Path) -> None:
    finder = write({"agent.yaml": AGENT.format(name="finder"), "tools.py": LOOKUP})
    seeker = write({"agent.yaml": AGENT.format(name="seeker"), "tools.py": LOOKUP})
    session = tmp_path / "talk.json"
    assert chat(finder, "--session", str(session), question="first").returncode == 0
    saved = session.read_bytes()
    done = chat(seeker, "--session", str(session), question="second")
    assert done.returncode == 2
    assert f"{session}: a session of the agent 'finder', not of 'seeker'" in done.stderr
    assert "--adopt-session" in done.stderr and "Traceback" not in done.stderr
    assert session.read_bytes() == saved  # untouched
    adopted = chat(seeker, "--session", str(session), "--adopt-session", question="second")
    assert adopted.returncode == 0, adopted.stderr
    assert prompts_in(session) == ["first", "second"]
    assert json.loads(session.read_bytes())["agent"] == "seeker"


def test_two_chats_on_one_session_file_take_turns_and_keep_both(
    write: Write, tmp_path: Path
) -> None:
    root = write({"agent.yaml": AGENT.format(name="finder"), "tools.py": HOLDING})
    session = tmp_path / "shared.json"
    calls, release = root / "calls", root / "release"

    def started(question: str, log: Path) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [*COMMAND, str(root), "--model", "test", "--session", str(session)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=log.open("w"),
            text=True,
        )
        assert process.stdin is not None
        process.stdin.write(question)
        process.stdin.close()
        return process

    def call_count() -> int:
        return len(calls.read_text().splitlines()) if calls.exists() else 0

    first = started("the first question /call *", tmp_path / "first.log")
    second: subprocess.Popen[str] | None = None
    try:
        until(lambda: call_count() == 1, timeout=60, what="the first chat's tool call")
        second = started("the second question /call *", tmp_path / "second.log")
        # the second chat waits for the file (or, unlocked, runs its turn meanwhile)
        until(
            lambda: call_count() == 2 or "Waiting" in (tmp_path / "second.log").read_text(),
            timeout=60,
            what="the second chat to wait or to call its tool",
        )
        release.touch()
        assert first.wait(60) == 0, (tmp_path / "first.log").read_text()
        assert second.wait(60) == 0, (tmp_path / "second.log").read_text()
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    assert prompts_in(session) == ["the first question /call *", "the second question /call *"]
    assert "another holodeck chat is answering in" in (tmp_path / "second.log").read_text()
    lock = session.with_name(".shared.json.lock")
    assert [oct(stat.S_IMODE(p.stat().st_mode)) for p in (session, lock)] == ["0o600"] * 2
