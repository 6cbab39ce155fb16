"""Time to first token in `holodeck chat`, against the runtime alone.

Both use the offline `test` model, which answers at once (an agent without tools gets
"Test answer to: <question>", streamed word by word), so what is measured is HoloDeck's
own latency:

- runtime: in-process, from calling `Agent.run(question)` to its first `TextDelta`;
- chat: the installed `holodeck chat` in a pseudo-terminal (rendering markdown, as for a
  person), from writing the question and Enter to the terminal, to the first byte of the
  answer read back from it. This includes prompt_toolkit accepting the line, the turn
  starting, the markdown view drawing its first frame, and the pseudo-terminal both ways.

A pseudo-terminal answers no cursor-position requests, so prompt_toolkit is told not to
send any (PROMPT_TOOLKIT_NO_CPR=1); a terminal emulator answers them at once.

Run: .venv/bin/python bench/chat_latency.py [turns]
Target: chat adds < 50 ms to the runtime's time to first token (median).
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import cast

import pexpect

from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, Event, TextDelta

AGENT_YAML = """
name: bench
model: {provider: test}
instructions: {inline: You answer.}
"""
WARMUP = 5
TIMEOUT = 30.0
HOLODECK = Path(sys.executable).parent / "holodeck"
ANSI = re.compile(r"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
FIRST_WORD = "Test"  # how the test model's answer begins; no question contains it


async def runtime_ms(root: Path, turns: int) -> list[float]:
    agent = Agent(load_agent(root), RunOptions(model="test"))
    samples = []
    for turn in range(WARMUP + turns):
        start = time.perf_counter()
        events = cast("AsyncGenerator[Event, None]", agent.run(f"question {turn}"))
        async for event in events:
            if isinstance(event, TextDelta):
                samples.append((time.perf_counter() - start) * 1000)
                break
        await events.aclose()
    return samples[WARMUP:]


class Screen:
    """The chat's pseudo-terminal output as plain text, read as it arrives."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.text = ""  # without escape sequences
        self.pending = ""  # an escape sequence not yet complete
        self.seen = 0  # the text up to here has been matched

    def read_until(self, needle: str) -> float:
        """Read until `needle` shows after the last match; returns when it arrived."""
        deadline = time.monotonic() + TIMEOUT
        arrived = time.perf_counter()
        while (found := self.text.find(needle, self.seen)) < 0:
            if time.monotonic() > deadline:
                raise SystemExit(f"no {needle!r} within {TIMEOUT} s:\n{self.text[-2000:]}")
            try:
                chunk = self.child.read_nonblocking(65536, timeout=1.0)
            except pexpect.TIMEOUT:
                continue
            arrived = time.perf_counter()
            self.feed(chunk)
        self.seen = found + len(needle)
        return arrived

    def feed(self, chunk: str) -> None:
        raw = self.pending + chunk
        cut = raw.rfind("\x1b")
        if cut < 0 or ANSI.match(raw, cut) or len(raw) - cut > 32:
            cut = len(raw)
        self.text += ANSI.sub("", raw[:cut]).replace("\r", "")
        self.pending = raw[cut:]


def chat_ms(root: Path, home: Path, turns: int) -> list[float]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(HOLODECK_HOME=str(home), TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(
        str(HOLODECK),
        ["chat", str(root), "--max-messages", "2"],  # the same history each time
        env=env,
        encoding="utf-8",
        dimensions=(40, 120),
    )
    child.delaybeforesend = None  # pexpect waits 50 ms before each send by default
    screen = Screen(child)
    screen.read_until("› ")
    samples = []
    try:
        for turn in range(WARMUP + turns):
            start = time.perf_counter()
            child.send(f"question {turn}\r")
            arrived = screen.read_until(FIRST_WORD)
            samples.append((arrived - start) * 1000)
            screen.read_until("tokens (")  # the turn's usage line ...
            screen.read_until("› ")  # ... then the next prompt
    finally:
        child.sendeof()
        child.expect(pexpect.EOF, timeout=TIMEOUT)
        child.close()
    return samples[WARMUP:]


def describe(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return (
        f"median {statistics.median(samples):7.2f} ms   p90 {p90:7.2f} ms   "
        f"min {ordered[0]:7.2f} ms"
    )


def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    with tempfile.TemporaryDirectory() as directory:
        root, home = Path(directory) / "agent", Path(directory) / "home"
        root.mkdir()
        home.mkdir()
        (root / "agent.yaml").write_text(AGENT_YAML, encoding="utf-8")
        os.environ["HOLODECK_HOME"] = str(home)
        runtime = asyncio.run(runtime_ms(root, turns))
        chat = chat_ms(root, home, turns)
    print(f"time to first token over {turns} turns (after {WARMUP} warm-up turns)")
    print(f"  runtime alone:        {describe(runtime)}")
    print(f"  holodeck chat (pty):  {describe(chat)}")
    added = statistics.median(chat) - statistics.median(runtime)
    print(f"chat adds {added:.2f} ms at the median (target < 50 ms)")


if __name__ == "__main__":
    main()
