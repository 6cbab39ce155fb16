"""The code tool's kept session (`builtins: [{name: code, session: kept}]`): one sandboxed
Python interpreter per agent session, called by the offline model through the runtime, in
real bubblewrap; and how agent.yaml and images declare it."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import MINIMAL_AGENT, Write
from holodeck import Agent, RunOptions, load_agent
from holodeck.runtime import Session
from holodeck.spec.diagnostics import SpecError

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sandbox)"
)

KEPT = MINIMAL_AGENT + "builtins: [{name: code, session: kept}]\n"
IMAGE = "spec_version: 1\nname: om\nprompt: You code.\nexecutor: {model: openai/gpt-4o-mini}\n"


def python_call(code: str, **more: object) -> str:
    return "/call run_python " + json.dumps({"code": code, **more})


async def run_python(session: Session, code: str, **more: object) -> str:
    final = await session.answer(python_call(code, **more))
    (call,) = final.tool_calls
    assert call.name == "run_python"
    return str(call.result)


def processes_in(folder: Path) -> list[int]:
    """The processes working in `folder`: a sandbox's bubblewrap and all it runs there."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cwd").readlink() == folder:
                    found.append(int(entry.name))
            except OSError:
                continue  # gone, or not ours to read
    return found


async def until(check: Callable[[], object], seconds: float = 10) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not check() and loop.time() < deadline:
        await asyncio.sleep(0.05)


# --- declaring it -------------------------------------------------------------------------


def test_agent_yaml_code_session_is_read_and_a_wrong_value_is_an_error(write: Write) -> None:
    root = write({"agent.yaml": KEPT})
    spec = load_agent(root / "agent.yaml")
    assert spec.workspace is not None and spec.workspace.tools == ("code",)
    assert spec.workspace.code_session == "kept"
    plain = write({"agent.yaml": MINIMAL_AGENT + "builtins: [code]\n"})
    assert load_agent(plain / "agent.yaml").workspace.code_session == "fresh"  # type: ignore[union-attr]
    wrong = write({"agent.yaml": KEPT.replace("kept", "kep")})
    with pytest.raises(SpecError) as caught:
        load_agent(wrong / "agent.yaml")
    says = str(caught.value)
    assert "agent.yaml:" in says and "builtins[0].session" in says
    assert "expected `fresh` or `kept`" in says


def test_image_code_session_is_read_and_settings_on_other_acting_builtins_are_errors(
    write: Write,
) -> None:
    body = IMAGE + "tools:\n  builtins:\n    - {name: code, session: kept}\n    - files\n"
    spec = load_agent(write({"config.yaml": body}))
    assert spec.workspace is not None and spec.workspace.tools == ("code", "files")
    assert spec.workspace.code_session == "kept"
    wrong = IMAGE + "tools:\n  builtins:\n    - {name: shell, session: kept}\n"
    with pytest.raises(SpecError) as caught:
        load_agent(write({"config.yaml": wrong}))
    assert "builtin `shell` takes no settings" in str(caught.value)


# --- the runtime: real interpreters in the sandbox ---------------------------------------


@needs_bwrap
def test_kept_session_keeps_names_between_calls_and_not_between_sessions(write: Write) -> None:
    kept = Agent(load_agent(write({"agent.yaml": KEPT}) / "agent.yaml"), RunOptions(model="test"))
    plain = MINIMAL_AGENT + "builtins: [code]\n"
    fresh = Agent(load_agent(write({"agent.yaml": plain}) / "agent.yaml"), RunOptions(model="test"))

    async def go(agent: Agent) -> tuple[str, str, str]:
        async with agent:
            async with agent.session() as first:
                await run_python(first, "rows = [1, 2, 3]\nprint('EARLIER')")
                same = await run_python(first, "print(sum(rows))\nrows")
            async with agent.session() as second:
                other = await run_python(second, "print(rows)")
            async with agent.session() as third:
                shown = await run_python(third, "40 + 2")
        return same, other, shown

    same, other, shown = asyncio.run(go(kept))
    assert same.startswith("completed") and "stdout:\n6\n[1, 2, 3]\n" in same
    assert "EARLIER" not in same  # a call's output only, not earlier calls'
    assert "NameError: name 'rows' is not defined" in other
    assert "42" in shown  # a final expression is shown, as the interactive interpreter does
    same, _, _ = asyncio.run(go(fresh))
    assert "NameError: name 'rows' is not defined" in same  # `fresh`: nothing is kept


@needs_bwrap
def test_a_call_past_its_timeout_kills_the_interpreter_and_the_next_call_restarts(
    write: Write,
) -> None:
    root = write({"agent.yaml": KEPT})
    agent = Agent(load_agent(root / "agent.yaml"), RunOptions(model="test"))
    child = "import subprocess\nsubprocess.Popen(['sleep', '8642.5'])\n"

    async def go() -> tuple[str, list[int], str, list[int], list[int]]:
        async with agent, agent.session() as session:
            await run_python(session, "kept = 'before'\n" + child)
            late = await run_python(
                session, "print('started', flush=True)\nimport time\ntime.sleep(60)", timeout=1
            )
            await until(lambda: not processes_in(root))
            after_timeout = processes_in(root)
            again = await run_python(session, "print('works')\nprint(kept)")
            await run_python(session, child)
            running = processes_in(root)
        await until(lambda: not processes_in(root))
        return late, after_timeout, again, running, processes_in(root)

    late, after_timeout, again, running, after_close = asyncio.run(go())
    assert late.startswith("timed out after 1 s") and "stdout:\nstarted" in late
    assert after_timeout == []  # the interpreter and the process it started are gone
    assert again.startswith("note: the previous interpreter was stopped at the timeout")
    assert "stdout:\nworks\n" in again and "NameError: name 'kept'" in again
    assert running  # the restarted interpreter ran while the session was open
    assert after_close == []  # and nothing is left once the session is closed


@needs_bwrap
def test_an_exception_returns_its_traceback_and_keeps_the_session(write: Write) -> None:
    root = write({"agent.yaml": KEPT})
    agent = Agent(load_agent(root / "agent.yaml"), RunOptions(model="test"))
    failing = "total = 10\ndef share(n):\n    return total / n\nshare(0)"

    async def go() -> tuple[str, str]:
        async with agent, agent.session() as session:
            raised = await run_python(session, failing)
            kept = await run_python(session, "print(share(4))")
        return raised, kept

    raised, kept = asyncio.run(go())
    assert raised.startswith("raised an exception")
    assert "Traceback (most recent call last):" in raised
    assert 'File "<call 1>", line 3, in share' in raised and "return total / n" in raised
    assert raised.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "stdout:\n2.5\n" in kept


@needs_bwrap
def test_a_call_printing_a_lot_is_capped_head_and_tail(write: Write) -> None:
    root = write({"agent.yaml": KEPT})
    agent = Agent(load_agent(root / "agent.yaml"), RunOptions(model="test"))
    chatty = (
        "print('HEAD' + 'x' * 500_000 + 'TAIL')\nimport sys\nprint('E' * 90_000, file=sys.stderr)"
    )

    async def go() -> tuple[str, str]:
        async with agent, agent.session() as session:
            big = await run_python(session, chatty)
            small = await run_python(session, "print('next')")
        return big, small

    big, small = asyncio.run(go())
    assert len(big) < 70_000  # 30,000 characters of stdout and again of stderr, at most
    stdout = big.split("stdout:\n", 1)[1].split("\nstderr:\n", 1)[0]
    assert stdout.startswith("HEAD") and stdout.rstrip().endswith("TAIL")
    assert "bytes cut: 500009 in all" in stdout
    assert "bytes cut: 90001 in all" in big.split("\nstderr:\n", 1)[1]
    assert small == "completed\nstdout:\nnext\n"  # nothing of the big call spills over


@needs_bwrap
def test_a_snippet_ending_the_interpreter_is_said_and_the_next_call_restarts(
    write: Write,
) -> None:
    root = write({"agent.yaml": KEPT})
    agent = Agent(load_agent(root / "agent.yaml"), RunOptions(model="test"))

    async def go() -> tuple[str, str]:
        async with agent, agent.session() as session:
            await run_python(session, "name = 'gone'")
            ended = await run_python(session, "import sys\nsys.exit(3)")
            after = await run_python(session, "print('again')")
        return ended, after

    ended, after = asyncio.run(go())
    assert ended.startswith("the interpreter exited with code 3 during this call")
    assert after.startswith("note: the previous interpreter exited with code 3")
    assert after.endswith("completed\nstdout:\nagain\n")
