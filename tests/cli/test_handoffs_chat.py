"""`holodeck chat` with a triage agent that hands the conversation to billing and back,
on the offline `test` model (told by `/call` words of the question): a line says when the
conversation passes, the banner and the prompt say who answers, and a resumed session
(`--session FILE`) still answers with the agent it was handed to."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect

from child_signals import foreground
from conftest import Write
from handoff_desks import desk_files

HOLODECK = Path(sys.executable).parent / "holodeck"
WAIT = 180.0  # a deadline for a start and an answer on a busy machine, not a sleep


def desks(write: Write) -> Path:
    return write(desk_files())


def piped(*args: str, question: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HOLODECK), "chat", *args],
        input=question,
        capture_output=True,
        text=True,
        timeout=WAIT,
        preexec_fn=foreground,
    )


def test_chat_says_each_handoff_and_a_resumed_session_keeps_who_answers(
    write: Write, tmp_path: Path
) -> None:
    root = desks(write)
    session = tmp_path / "talk.json"
    args = (str(root), "--model", "test", "--session", str(session))

    first = piped(*args, question="Invoice 7? /call transfer_to_billing /call lookup_invoice")
    assert first.returncode == 0, first.stderr
    assert "handoffs    billing" in first.stderr
    assert "answering   triage" in first.stderr
    assert "billing takes over" in first.stderr
    assert "42 EUR" in first.stdout  # billing answered from its tool

    # resumed: billing still answers, without being handed the conversation again
    second = piped(*args, question="And invoice 8? /call lookup_invoice")
    assert second.returncode == 0, second.stderr
    assert "answering   billing" in second.stderr
    assert "takes over" not in second.stderr
    assert "invoice 8: 42 EUR" in second.stdout

    third = piped(*args, question="Thanks! /call transfer_back_to_triage")
    assert third.returncode == 0, third.stderr
    assert "back to triage" in third.stderr
    assert third.stdout.startswith("Test answer to: Thanks!")
    fourth = piped(*args, question="Hello")
    assert "answering   triage" in fourth.stderr


def test_the_prompt_names_the_agent_a_handoff_passed_the_conversation_to(write: Write) -> None:
    root = desks(write)
    env = {**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1"}
    child = pexpect.spawn(
        str(HOLODECK),
        ["chat", str(root), "--model", "test"],
        env=env,
        encoding="utf-8",
        dimensions=(40, 120),
        timeout=WAIT,
    )
    try:
        child.expect("answering")
        child.expect("triage")  # the banner's row (escape sequences between)
        child.expect("› ")
        child.send("Invoice 7 /call transfer_to_billing\r")
        child.expect("billing takes over")
        child.expect(r"billing (\x1b\[[0-9;?]*[A-Za-z])*› ")  # the prompt, led by billing
        child.send("Back please /call transfer_back_to_triage\r")
        child.expect("back to triage")
        child.expect(r"[0-9] s")  # the turn's usage line ends in seconds
        child.expect("› ")
        assert "billing" not in child.before  # the prompt is plain again
        child.send("exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
