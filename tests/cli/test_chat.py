"""`holodeck chat`, driven for real: the installed command runs in a pseudo-terminal
(pexpect) or with stdin piped, against agents on the offline `test` model, which calls the
tools a question asks for (`/call lookup`, the chat command or words of the question) and
then answers from what they returned (here: "found a", for the question "a")."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart

from child_signals import foreground
from conftest import Write
from holodeck.cli.chat.transcript import exchanges_from, transcript_markdown
from holodeck.cli.chat.view import _finished_blocks, _hard_breaks
from holodeck.runtime import Usage, price
from server_harness import until

HOLODECK = Path(sys.executable).parent / "holodeck"
WAIT = 60.0  # seconds any expected output may take on a loaded machine (a deadline, not a sleep)
START_WAIT = (
    180.0  # seconds a chat may take to start and answer (or reach a tool) on a busy machine
)
ANSI = re.compile(r"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\x1b\][^\x07]*\x07")

LOOKUP_AGENT = """
name: finder
model: {provider: openai, name: gpt-4o-mini}
instructions: {inline: You find things.}
tools:
  - {type: function, name: lookup, file: tools.py, function: lookup}
"""
LOOKUP_TOOL = '''
def lookup(query: str) -> str:
    """Look something up.

    Args:
        query: What to look up.
    """
    return "found " + query
'''
# The first call says it started (a file beside it), then blocks: until the turn is
# cancelled (async), or for good (sync: a thread cannot be stopped). Later calls answer.
BLOCKING_TOOLS = {
    "async": '''
import asyncio
from pathlib import Path

CALLS = []

async def lookup(query: str) -> str:
    """Look something up, slowly the first time.

    Args:
        query: What to look up.
    """
    CALLS.append(query)
    if len(CALLS) == 1:
        Path(__file__).with_name("started").touch()
        await asyncio.Event().wait()
    return "found " + query
''',
    "sync": '''
import threading
from pathlib import Path

CALLS = []

def lookup(query: str) -> str:
    """Look something up; the first call never returns.

    Args:
        query: What to look up.
    """
    CALLS.append(query)
    if len(CALLS) == 1:
        Path(__file__).with_name("started").touch()
        threading.Event().wait()
    return "found " + query
''',
}


class Terminal:
    """`holodeck chat ARGS` in a pseudo-terminal, its output read as plain text."""

    def __init__(self, *args: str, cwd: Path | None = None) -> None:
        env = {
            **{k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")},
            "TERM": "xterm-256color",
            # a pseudo-terminal answers no cursor-position requests; without this,
            # prompt_toolkit waits up to a second for each answer
            "PROMPT_TOOLKIT_NO_CPR": "1",
        }
        self.child = pexpect.spawn(
            str(HOLODECK),
            ["chat", *args],
            env=env,
            cwd=str(cwd) if cwd else None,
            encoding="utf-8",
            dimensions=(40, 120),
        )
        self.child.delaybeforesend = None
        self.screen = ""  # the output without escape sequences
        self.pending = ""  # an escape sequence not complete yet
        self.seen = 0  # the screen up to here has been matched

    def expect(self, needle: str, timeout: float = WAIT) -> None:
        """Wait until `needle` appears after what was matched before."""
        deadline = time.monotonic() + timeout
        while (found := self.screen.find(needle, self.seen)) < 0:
            if not self._read(deadline):
                raise AssertionError(f"no {needle!r}:\n{self.screen[-3000:]}")
        self.seen = found + len(needle)

    def _read(self, deadline: float) -> bool:
        """Read what the chat wrote; False once it has exited or the deadline passed."""
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                chunk = self.child.read_nonblocking(65536, timeout=min(remaining, 1.0))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                return False
            raw = self.pending + chunk
            cut = raw.rfind("\x1b")
            if cut < 0 or ANSI.match(raw, cut) or len(raw) - cut > 32:
                cut = len(raw)
            self.screen += ANSI.sub("", raw[:cut]).replace("\r", "")
            self.pending = raw[cut:]
            return True
        return False

    def ask(self, line: str) -> None:
        self.child.send(line + "\r")

    def command(self, line: str, *shows: str) -> None:
        """Send a slash command, see what it shows, and wait for the prompt again."""
        self.ask(line)
        for text in shows:
            self.expect(text)
        self.expect("› ")

    def prompt(self) -> None:
        """Wait for the end of a turn (its usage line) and the next prompt."""
        self.expect(" s\n")
        self.expect("› ")

    def exit_code(self, timeout: float = WAIT) -> int:
        deadline = time.monotonic() + timeout
        while self._read(deadline):
            pass
        if self.child.isalive():
            self.child.terminate(force=True)
            raise AssertionError(f"still running after {timeout} s:\n{self.screen[-3000:]}")
        self.child.close()
        assert self.child.signalstatus is None, self.screen[-3000:]
        assert "Traceback" not in self.screen
        return int(self.child.exitstatus)


def piped(
    *args: str, question: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HOLODECK), "chat", *args],
        input=question,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=START_WAIT,
        preexec_fn=foreground,
    )


@pytest.fixture
def finder(write: Write) -> Path:
    return write({"agent.yaml": LOOKUP_AGENT, "tools.py": LOOKUP_TOOL})


def prompts_in(session: Path) -> list[str]:
    saved = json.loads(session.read_bytes())
    assert saved["format"] == "holodeck-session"
    messages = ModelMessagesTypeAdapter.validate_python(saved["messages"])
    return [
        str(part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]


# --- a conversation --------------------------------------------------------------------


def test_a_conversation_shows_the_banner_tool_calls_and_streamed_answers(finder: Path) -> None:
    term = Terminal(str(finder), "--model", "test")
    term.expect("HoloDeck chat · finder")
    term.expect("model       test (offline, instead of openai/gpt-4o-mini)")
    term.expect("tools       lookup")
    term.expect("memory      last 20 messages, not saved")
    term.expect("Esc then Enter")
    term.expect("› ")
    term.ask("What can you find?")  # no tool is asked for: the offline model calls none
    term.expect("Test answer to: What can you find?")
    term.prompt()
    assert "lookup(" not in term.screen
    term.command("/call lookup", "The next answer calls lookup.")
    term.ask("a")
    term.expect('→ lookup(query="a")')  # the question fills the tool's `query`
    term.expect("✓ lookup")
    term.expect("ms → found a")
    term.expect("found a", timeout=WAIT)  # the answer, streamed after the tool lines
    term.expect("tokens (")
    term.expect("1 tool call")
    term.prompt()
    term.command('/call lookup {"query": "pears"}', 'calls lookup with {"query": "pears"}')
    term.ask("And again?")  # the arguments given win over the question's words
    term.expect("ms → found pears")
    term.prompt()
    term.ask("And once more?")  # `/call` was for one answer
    term.expect("Test answer to: And once more?")
    term.prompt()
    term.ask("exit")
    assert term.exit_code() == 0


def test_answers_are_rendered_as_markdown_on_a_terminal_and_plain_when_piped(
    write: Write,
) -> None:
    root = write(
        {
            "agent.yaml": LOOKUP_AGENT,
            "tools.py": LOOKUP_TOOL.replace('"found " + query', '"**bold** and `code`"'),
        }
    )
    term = Terminal(str(root), "--model", "test")
    term.expect("› ")
    term.ask("Format it /call lookup")
    term.expect("✓ lookup")
    term.expect("bold and code")
    term.prompt()
    term.child.sendeof()
    assert term.exit_code() == 0
    done = piped(str(root), "--model", "test", question="Format it /call lookup")
    assert "**bold** and `code`" in done.stdout


def test_several_lines_are_one_question(write: Write, tmp_path: Path) -> None:
    root = write({"agent.yaml": LOOKUP_AGENT.split("tools:")[0]})  # no tools: it echoes
    term = Terminal(str(root), "--model", "test")
    term.expect("› ")
    term.child.send("first line\x1b\rsecond line\r")  # Esc then Enter adds a line
    term.expect("Test answer to: first line")
    term.expect("second line")
    term.prompt()
    saved = tmp_path / "lines.md"
    term.command(f"/save {saved}", "Saved the transcript")
    term.ask("quit")
    assert term.exit_code() == 0
    assert "## You\n\nfirst line\nsecond line\n" in saved.read_text(encoding="utf-8")


# --- cancelling and leaving ------------------------------------------------------------


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_ctrl_c_cancels_the_answer_and_the_conversation_carries_on(
    write: Write, tmp_path: Path, kind: str
) -> None:
    root = write({"agent.yaml": LOOKUP_AGENT, "tools.py": BLOCKING_TOOLS[kind]})
    session = tmp_path / "session.json"
    term = Terminal(str(root), "--model", "test", "--session", str(session))
    term.expect("› ")
    term.ask("a /call lookup")
    term.expect('→ lookup(query="a")')
    deadline = time.monotonic() + START_WAIT
    while not (root / "started").exists():  # the tool runs, and blocks
        assert time.monotonic() < deadline, term.screen
        time.sleep(0.01)
    term.child.sendintr()  # the tool never returns: the answer ends without it
    term.expect("✗ lookup cancelled")
    term.expect("Cancelled: this question is not kept.")
    term.expect("› ")
    assert not session.exists()  # nothing was answered, nothing saved
    term.ask("b /call lookup")
    term.expect("ms → found b")
    term.expect("found b")
    term.prompt()
    # the cancelled question left no trace in the conversation
    assert prompts_in(session) == ["b /call lookup"]
    term.child.sendeof()  # leaves at once, even with the sync tool's thread still blocked
    assert term.exit_code() == 0


def test_what_is_typed_during_an_answer_waits_for_the_next_prompt(write: Write) -> None:
    tool = '''
import asyncio
from pathlib import Path

async def lookup(query: str) -> str:
    """Look something up, once the test says so.

    Args:
        query: What to look up.
    """
    while not Path(__file__).with_name("go").exists():
        await asyncio.sleep(0.01)
    return "found " + query
'''
    root = write({"agent.yaml": LOOKUP_AGENT, "tools.py": tool})
    term = Terminal(str(root), "--model", "test")
    term.expect("› ")
    term.ask("a /call lookup")
    term.expect('→ lookup(query="a")')
    answer_starts = term.seen
    term.child.send("typed ahead")  # while the answer is being written
    (root / "go").touch()
    term.expect("ms → found a")
    term.expect(" s\n")  # the end of the turn
    assert "typed ahead" not in term.screen[answer_starts : term.seen]  # not echoed ...
    term.expect("› typed ahead")  # ... but waiting in the prompt
    term.ask(" /call lookup")
    term.expect("ms → found typed ahead")
    term.prompt()
    term.ask("exit")
    assert term.exit_code() == 0


def test_closing_the_terminal_mid_answer_ends_the_session(write: Write) -> None:
    root = write({"agent.yaml": LOOKUP_AGENT, "tools.py": BLOCKING_TOOLS["async"]})
    term = Terminal(str(root), "--model", "test")
    term.expect("› ")
    term.ask("a /call lookup")
    term.expect('→ lookup(query="a")')
    term.child.kill(signal.SIGHUP)
    assert term.exit_code() == 128 + signal.SIGHUP


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 128 + signal.SIGTERM)]
)
def test_a_piped_question_can_be_interrupted(write: Write, signum: int, code: int) -> None:
    root = write(
        {
            "agent.yaml": LOOKUP_AGENT,
            "tools.py": BLOCKING_TOOLS["async"],
            "question": "wait /call lookup",
        }
    )
    with (root / "question").open() as question:
        process = subprocess.Popen(
            [str(HOLODECK), "chat", str(root), "--model", "test"],
            stdin=question,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=foreground,
        )
    try:
        # the tool runs, and blocks; the signal may come before the chat has shown its start
        until(
            lambda: (root / "started").exists() or process.poll() is not None,
            START_WAIT,
            "the tool to start",
        )
        process.send_signal(signum)
        out, err = process.communicate(timeout=WAIT)
    finally:
        process.kill()
    assert process.returncode == code, err
    assert "✗ lookup cancelled" in err and "Traceback" not in err
    assert out == ""


def test_a_call_interrupted_before_the_chat_showed_it_is_reported_cancelled(
    write: Write,
) -> None:
    # Ctrl+C arrives while the tool runs, before the chat has read that it started: the
    # tool interrupts its own process, so that order is certain
    tool = BLOCKING_TOOLS["async"].replace(
        ".touch()", ".touch()\n        os.kill(os.getpid(), signal.SIGINT)"
    )
    root = write({"agent.yaml": LOOKUP_AGENT, "tools.py": "import os, signal\n" + tool})
    done = piped(str(root), "--model", "test", question="wait /call lookup")
    assert done.returncode == 130, done.stderr
    assert "✗ lookup cancelled" in done.stderr and "Traceback" not in done.stderr
    assert (root / "started").exists()


@pytest.mark.parametrize("keys", ["exit\r", "quit\r", "/quit\r", "\x04", "\x03"], ids=repr)
def test_the_ways_to_leave(finder: Path, keys: str) -> None:
    term = Terminal(str(finder), "--model", "test")
    term.expect("› ")
    term.child.send(keys)
    if keys == "\x03":  # Ctrl+C on an empty line: once says how to leave, twice leaves
        term.expect("Press Ctrl+C again")
        term.expect("› ")
        term.child.send(keys)
    assert term.exit_code() == 0


def test_ctrl_c_at_the_prompt_clears_the_line_then_says_how_to_leave(finder: Path) -> None:
    term = Terminal(str(finder), "--model", "test")
    term.expect("› ")
    term.child.send("half a question\x03")  # clears the line: nothing is sent
    term.child.send("\x03")
    term.expect("(Press Ctrl+C again to leave, or Ctrl+D, or type exit.)")
    term.expect("› ")
    term.command("/usage", "cost: nothing yet")  # anything in between disarms it
    term.child.send("\x03")
    term.expect("Press Ctrl+C again")
    term.expect("› ")
    term.child.send("\x03")
    assert term.exit_code() == 0
    assert "found" not in term.screen  # the cleared line was never asked


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (waiting a while: it may be on its way out)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("ending", ["exit", "hang-up", "abandoned-thread"])
def test_no_tool_process_outlives_the_session(write: Write, ending: str) -> None:
    """An MCP server runs for the whole session (one process across turns); however the
    session ends, it ends too. `--linger`: the server ignores its stdin closing."""
    demo = Path(__file__).resolve().parents[1] / "mcp_servers" / "demo.py"
    tools = BLOCKING_TOOLS["sync" if ending == "abandoned-thread" else "async"]
    root = write(
        {
            "agent.yaml": LOOKUP_AGENT
            + f"  - {{type: mcp, name: demo, command: {sys.executable}, "
            + f"args: [{demo}, --linger], tools: [whoami]}}\n",
            "tools.py": tools if ending != "exit" else LOOKUP_TOOL,
        }
    )
    term = Terminal(str(root), "--model", "test")
    term.expect("› ")
    term.ask(
        "who runs the server? /call demo_whoami" + (" /call lookup" if ending != "exit" else "")
    )
    term.expect("✓ demo_whoami")
    term.expect('"pid": ')
    digits = term.seen
    term.expect(",")
    pid = int(term.screen[digits : term.seen - 1])
    if ending == "exit":
        term.prompt()
        term.ask("and now? /call demo_whoami")
        term.expect(f'"pid": {pid},')  # the same server answers the next question
        term.prompt()
        term.ask("exit")
        assert term.exit_code() == 0
    else:
        deadline = time.monotonic() + WAIT
        while not (root / "started").exists():  # the blocking tool runs too
            assert time.monotonic() < deadline, term.screen
            time.sleep(0.01)
        if ending == "hang-up":
            term.child.kill(signal.SIGHUP)
            assert term.exit_code() == 128 + signal.SIGHUP
        else:  # cancel the turn, leaving a thread that never returns, and leave
            term.child.sendintr()
            term.expect("Cancelled")
            term.expect("› ")
            term.child.sendeof()
            assert term.exit_code() == 0
    assert gone(pid)


# --- slash commands --------------------------------------------------------------------


def test_slash_commands(write: Write, tmp_path: Path) -> None:
    root = write(
        {
            "agent.yaml": LOOKUP_AGENT
            + "  - {type: agent, name: helper, path: helper/agent.yaml}\n"
            + "skills:\n  - skills/greeting\n",
            "tools.py": LOOKUP_TOOL,
            "helper/agent.yaml": """
                name: helper
                description: Helps out.
                model: {provider: openai, name: gpt-4o-mini}
                instructions: {inline: You help.}
            """,
            "skills/greeting/SKILL.md": """
                ---
                name: greeting
                description: How to greet.
                ---
                Say hello.
            """,
        }
    )
    term = Terminal(str(root), "--model", "test")
    term.expect("tools       lookup")
    term.expect("skills      greeting")
    term.expect("sub-agents  helper")
    term.expect("› ")
    term.command("/help", "/save FILE", "/call TOOL", "Esc then Enter add a line")
    term.command(
        "/tools",
        "lookup      function   Look something up.",
        "helper      sub-agent  Helps out.",
        "load_skill  skills     loads the instructions of: greeting",
    )
    term.command("/usage", "tokens: 0 (0 in, 0 out) in 0 model requests")
    term.command("/call lookup", "The next answer calls lookup.")
    term.command('/call load_skill {"name": "greeting"}', "The next answer calls load_skill")
    term.command("/call helper", "The next answer calls helper.")
    term.command("/call nothing", "error: /call nothing: the agent has no tool nothing")
    term.command("/call lookup {oops", "error: /call lookup: the arguments are not JSON")
    term.command("/call lookup [1]", "error: /call lookup: give the arguments as a JSON object")
    term.command("/call", "error: /call needs a tool")
    term.ask("a")
    term.expect("✓ helper")
    term.prompt()
    term.command("/usage", "model requests", "cost: unknown (")
    transcript = tmp_path / "out" / "chat.md"
    term.command(f"/save {transcript}", f"Saved the transcript to {transcript}")
    term.command("/reset", "The conversation is forgotten")
    term.command("/nonsense", "error: unknown command /nonsense; /help lists the commands")
    term.command("/save", "error: /save needs a file name")
    term.ask("/exit")
    assert term.exit_code() == 0
    text = transcript.read_text(encoding="utf-8")
    assert text.startswith("# Chat with finder\n\n## You\n\na\n\n## finder\n\n")
    assert '- `lookup(query="a")` → found a' in text
    assert '- `load_skill(name="greeting")` → Say hello.' in text
    answer = text.split("- `load_skill", 1)[1]
    assert "found a" in answer.split("\n\n", 1)[1]  # the answer follows the tool calls


# --- memory and sessions ---------------------------------------------------------------


def test_a_session_is_saved_after_each_turn_trimmed_and_resumed(
    finder: Path, tmp_path: Path
) -> None:
    session = tmp_path / "talk.json"
    term = Terminal(str(finder), "--model", "test", "--session", str(session))
    term.expect(f"saved to {session}")
    term.ask("remember apples /call lookup")
    term.prompt()
    assert prompts_in(session) == ["remember apples /call lookup"]
    term.ask("remember pears /call lookup")
    term.prompt()
    assert prompts_in(session) == ["remember apples /call lookup", "remember pears /call lookup"]
    term.ask("exit")
    assert term.exit_code() == 0

    # resumed, with room for one turn (4 messages: question, tool call, result, answer)
    term = Terminal(
        str(finder), "--model", "test", "--session", str(session), "--max-messages", "4"
    )
    term.expect(f"memory      last 4 messages, resumed 4 from {session}")
    term.ask("remember plums /call lookup")
    term.prompt()
    assert prompts_in(session) == ["remember plums /call lookup"]
    transcript = tmp_path / "t.md"
    term.command(f"/save {transcript}", "Saved")
    term.command("/reset", "forgotten")
    assert json.loads(session.read_text(encoding="utf-8"))["messages"] == []
    term.ask("exit")
    assert term.exit_code() == 0
    text = transcript.read_text(encoding="utf-8")
    # what was resumed (as trimmed to 4 messages), then this run's question
    assert text.index("remember pears") < text.index("remember plums")
    assert "remember apples" not in text


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201e2a35c0e0000000049454e44ae426082"
)


def test_attach_sends_a_file_with_the_next_question(write: Write, tmp_path: Path) -> None:
    seeing = write(
        {
            "config.yaml": "spec_version: 1\nllm: {model: openai/gpt-4o}\n"
            "interaction: {modalities: {input: [text, image]}}\n",
            "AGENTS.md": "You look at pictures.",
        }
    )
    picture = tmp_path / "cat.png"
    picture.write_bytes(PNG)
    session = tmp_path / "talk.json"
    term = Terminal(str(seeing), "--model", "test", "--session", str(session))
    term.expect("› ")
    term.command("/attach nowhere.png", "nowhere.png: cannot read the file")
    term.command(f"/attach {picture}", "Attached cat.png (image/png)")
    term.ask("what is this?")
    term.prompt()
    saved = json.loads(session.read_bytes())["messages"]
    question = saved[0]["parts"][0]["content"]
    assert question[0] == "what is this?"
    assert question[1]["media_type"] == "image/png"  # the picture went with it
    term.ask("and now?")
    term.prompt()
    second = json.loads(session.read_bytes())["messages"][2]["parts"][0]["content"]
    assert second == "and now?"  # an attachment goes with one question only
    term.ask("exit")
    assert term.exit_code() == 0


def test_attach_is_refused_for_an_agent_that_reads_only_text(finder: Path, tmp_path: Path) -> None:
    picture = tmp_path / "cat.png"
    picture.write_bytes(PNG)
    term = Terminal(str(finder), "--model", "test")
    term.expect("› ")
    term.command(f"/attach {picture}", "finder does not accept image input (cat.png)")
    term.ask("exit")
    assert term.exit_code() == 0


def test_an_unreadable_session_file_is_refused(finder: Path, tmp_path: Path) -> None:
    session = tmp_path / "broken.json"
    session.write_text("{not json", encoding="utf-8")
    done = piped(str(finder), "--model", "test", "--session", str(session), question="hi")
    assert done.returncode == 2
    assert f"error: {session}: not a chat session (" in done.stderr
    assert "Traceback" not in done.stderr


# --- piped, recorded and replayed ------------------------------------------------------


def test_piped_stdin_is_answered_once_with_only_the_answer_on_stdout(finder: Path) -> None:
    done = piped(str(finder), "--model", "test", question="a /call lookup\n")
    assert done.returncode == 0, done.stderr
    assert "found a" in done.stdout and done.stdout.endswith("\n")
    assert "HoloDeck" not in done.stdout and "lookup(" not in done.stdout
    assert "HoloDeck chat · finder" in done.stderr
    assert '  → lookup(query="a")' in done.stderr
    assert "tokens (" in done.stderr
    empty = piped(str(finder), "--model", "test", question="  \n")
    assert empty.returncode == 2
    assert "nothing to ask: stdin was empty" in empty.stderr


def test_verbose_shows_whole_results_and_sub_agents_are_nested(write: Write) -> None:
    long = "x" * 150
    root = write(
        {
            "agent.yaml": """
                name: boss
                model: {provider: openai, name: gpt-4o-mini}
                instructions: {inline: You delegate.}
                tools:
                  - {type: agent, name: helper, path: helper/agent.yaml}
            """,
            "helper/agent.yaml": LOOKUP_AGENT.replace("finder", "helper"),
            "helper/tools.py": LOOKUP_TOOL.replace('"found " + query', repr(long)),
        }
    )
    # a sub-agent calls what its own prompt asks for: here, what the question gave it
    question = 'go /call helper {"task": "a /call lookup"}'
    short = piped(str(root), "--model", "test", question=question)
    assert short.returncode == 0, short.stderr
    lines = short.stderr.splitlines()
    assert '  → helper(task="a /call lookup")' in lines
    assert '    → lookup(query="a")' in lines  # the sub-agent's call, one level deeper
    nested = next(line for line in lines if line.startswith("    ✓ lookup"))
    assert nested.endswith("…") and long not in nested
    assert any(line.startswith("  ✓ helper ") for line in lines)
    full = piped(str(root), "--model", "test", "--verbose", question=question)
    assert f"      {long}" in full.stderr.splitlines()


def test_record_then_replay_offline(finder: Path, tmp_path: Path) -> None:
    cassette = tmp_path / "chat.yaml"
    recorded = piped(str(finder), "--model", "test", "--record", str(cassette), question="q")
    assert recorded.returncode == 0, recorded.stderr
    assert "recording to" in recorded.stderr
    assert "interactions:" in cassette.read_text(encoding="utf-8")
    # no --model and no API key: every answer comes from the cassette
    replayed = piped(str(finder), "--replay", str(cassette), question="q")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == recorded.stdout
    missing = piped(str(finder), "--replay", str(cassette), question="another question")
    assert missing.returncode == 3
    assert "no response recorded" in missing.stderr
    assert len(missing.stderr.strip().splitlines()[-1]) > 0 and "Traceback" not in missing.stderr


def test_a_model_failure_in_a_conversation_is_one_line_and_the_prompt_returns(
    finder: Path, tmp_path: Path
) -> None:
    cassette = tmp_path / "empty.yaml"
    cassette.write_text("version: 1\ninteractions: []\n", encoding="utf-8")
    term = Terminal(str(finder), "--replay", str(cassette))
    term.expect("› ")
    term.command("/call lookup", "error: /call steers only the offline `test` model")
    term.ask("anything")
    term.expect("error: openai/gpt-4o-mini: no response recorded in")
    term.expect("› ")
    term.ask("exit")
    assert term.exit_code() == 0


def test_the_piped_example_in_the_docs_is_real() -> None:
    repo = Path(__file__).resolve().parents[2]
    docs = (repo / "docs" / "chat.md").read_text(encoding="utf-8")
    block = re.findall(r"```console\n(.*?)```", docs, flags=re.DOTALL)[0]
    command, *shown = block.splitlines()
    question, invocation = re.fullmatch(r'\$ echo "(.*)" \| holodeck (.*)', command).groups()
    done = subprocess.run(
        [str(HOLODECK), *invocation.split()],
        input=question + "\n",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # both, in the order they were written
        text=True,
        cwd=repo,
        timeout=START_WAIT,
    )
    assert done.returncode == 0, done.stdout

    def timeless(lines: list[str]) -> list[str]:
        return [re.sub(r"\d+(\.\d+)? (ms|s)\b", "N \\2", line) for line in lines]

    assert in_any_finishing_order(timeless(done.stdout.splitlines())) == (
        in_any_finishing_order(timeless(shown))
    )


def in_any_finishing_order(lines: list[str]) -> list[str]:
    """`lines` with each run of consecutive `✓`/`✗` lines sorted: tools the model calls
    together run in parallel and are shown as they finish, in whichever order that is."""
    ordered: list[str] = []
    ended: list[str] = []
    for line in lines:
        if line.lstrip().startswith(("✓ ", "✗ ")):
            ended.append(line)
            continue
        ordered += [*sorted(ended), line]
        ended = []
    return ordered + sorted(ended)


def test_calls_that_end_together_compare_in_any_order() -> None:
    shown = ["  → a()", "  → b()", "  ✓ a 1 ms → 1", "  ✓ b 1 ms → 2", "answer"]
    swapped = ["  → a()", "  → b()", "  ✓ b 1 ms → 2", "  ✓ a 1 ms → 1", "answer"]
    assert in_any_finishing_order(swapped) == in_any_finishing_order(shown)
    # only the order of calls ending together is free: starts and answers still count
    assert in_any_finishing_order(["  → b()", *shown[1:]]) != in_any_finishing_order(shown)
    assert in_any_finishing_order([*shown[:-1], "other"]) != in_any_finishing_order(shown)


# --- failures --------------------------------------------------------------------------


def test_a_broken_agent_lists_its_problems_and_exits_2(write: Write) -> None:
    root = write({"agent.yaml": LOOKUP_AGENT.replace("instructions:", "instructons:")})
    done = piped(str(root), question="hi")
    assert done.returncode == 2
    assert f"{root / 'agent.yaml'}:3:1: error: instructons: unknown field" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    term = Terminal(str(root))
    term.expect("error: instructons: unknown field")
    assert term.exit_code() == 2
    bad_model = piped(str(root), "--model", "nonsense", question="hi")
    assert bad_model.returncode == 2
    assert "use `test` or `provider/name`" in bad_model.stderr


def test_a_missing_api_key_is_said_with_its_fix_and_exits_2(finder: Path) -> None:
    done = piped(str(finder), question="hi")
    assert done.returncode == 2  # a configuration error, as the README's table says
    said, fix = done.stderr.strip().splitlines()
    assert said.startswith("error: openai/gpt-4o-mini: no API key is set")
    assert fix.startswith("hint: Set OPENAI_API_KEY")


# --- pieces ----------------------------------------------------------------------------


def test_finished_markdown_blocks_end_at_blank_lines_outside_code_fences() -> None:
    text = "One.\n\nTwo.\n\n```\ncode\n\nmore\n```\n\nThree"
    cut = _finished_blocks(text, 0)
    assert text[:cut] == "One.\n\nTwo.\n\n```\ncode\n\nmore\n```\n\n"
    assert _finished_blocks("One.\n\n", 0) == 0  # the next block has not begun
    assert _finished_blocks("- item\n\n  more of it", 0) == 0  # an indented continuation
    assert _hard_breaks("a\nb\n\n```\nx\ny\n```") == "a  \nb\n\n```\nx\ny\n```"


def test_an_answer_streamed_in_pieces_looks_as_if_rendered_at_once() -> None:
    import io

    from rich.console import Console

    from holodeck.cli.chat.view import _markdown, _MarkdownAnswer

    text = (
        "# Title\n\nSome *intro* text\non two lines.\n\n1. first\n2. second\n\n"
        "```python\ndef f():\n\n    return 1\n```\n\n- a\n  continued\n\nFinal **words**."
    )

    def console(out: io.StringIO) -> Console:
        return Console(file=out, width=60, force_terminal=False, color_system=None)

    streamed = io.StringIO()
    answer = _MarkdownAnswer(console(streamed))
    for start in range(0, len(text), 3):
        answer.add(text[start : start + 3])
    answer.close()
    whole = io.StringIO()
    console(whole).print(_markdown(text))
    assert streamed.getvalue() == whole.getvalue()
    assert "def f():" in streamed.getvalue() and "**" not in streamed.getvalue()


def test_cost_is_summed_only_when_every_request_has_a_price() -> None:
    from decimal import Decimal

    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.usage import RequestUsage

    def reply(model: str) -> ModelResponse:
        usage = RequestUsage(input_tokens=1000, output_tokens=100)
        return ModelResponse([TextPart("x")], usage=usage, model_name=model, provider_name="openai")

    cost, _ = price([reply("gpt-4o-mini")], Usage(1000, 100, 1))
    assert cost is not None and Decimal(0) < cost < Decimal("0.01")
    cost, why = price([reply("holodeck-test")], Usage(1000, 100, 1))
    assert cost is None and why == "no price data for holodeck-test"
    cost, why = price([reply("gpt-4o-mini")], Usage(2000, 200, 2))  # a sub-agent's request
    assert cost is None and "sub-agents" in why


def test_a_resumed_conversation_becomes_a_transcript() -> None:
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart

    messages = [
        ModelRequest([UserPromptPart("q1")]),
        ModelResponse([ToolCallPart("lookup", {"query": "a"}, tool_call_id="c1")]),
        ModelRequest([ToolReturnPart("lookup", "found a", tool_call_id="c1")]),
        ModelResponse([TextPart("answer 1")]),
    ]
    text = transcript_markdown("finder", exchanges_from(messages))
    assert text == (
        "# Chat with finder\n\n## You\n\nq1\n\n## finder\n\n"
        '- `lookup(query="a")` → found a\n\nanswer 1\n'
    )


def test_the_banner_says_what_the_agent_is_and_who_keeps_it(write: Write) -> None:
    from holodeck import RunOptions
    from holodeck.cli.chat.commands import banner_rows
    from holodeck.cli.chat.conversation import Conversation
    from holodeck.config.loader import load_agent
    from holodeck.runtime import Agent

    root = write(
        {
            "agent.yaml": "name: a\ndescription: Answers billing questions.\nauthor: Finance team\n"
            "model: {provider: openai, name: gpt-4o}\ninstructions: {inline: hi}\n"
        }
    )
    spec = load_agent(root)
    conversation = Conversation(Agent(spec, RunOptions(model="test")), max_messages=20)
    rows = dict(banner_rows(conversation, 0))
    assert rows["about"] == "Answers billing questions."
    assert rows["author"] == "Finance team"
