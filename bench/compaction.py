"""A 200-turn session with `memory.compaction` against the same session keeping its whole
history: what the model is sent per turn, and what the summaries cost.

Run: .venv/bin/python bench/compaction.py [turns] [context_window]   (default 200 8000)

Both sessions talk to a scripted OpenAI-compatible server on 127.0.0.1 (the real openai
SDK over real HTTP) in-process, with the same prompts: small talk, a fact to keep at
turn 3, a tool call every 7th turn, the fact asked for at the last turn. The scripted
model answers from what the request carries; asked for a summary (the `summary` tool
offered), it keeps the sentences the user asked to remember. Request sizes are the JSON
bodies the server received; tokens are estimated at four bytes of that JSON each (a
tokenizer counts fewer). "kept fact" says whether the last answer knew the fact;
"requests counted" is the session's usage, summary calls included.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, FinalMessage, HistoryCompacted
from scripted_servers import Call, OpenAIServer, Step, text, tool_calls

FACT = "Please remember: my locker code is 4417."
PADDING = " Some small talk about the weather, the train and lunch, to fill the turn."


class Conversing(OpenAIServer):
    def _next(self) -> Step:
        body = self.requests[-1].body
        messages = body["messages"]
        if any(t["function"]["name"] == "summary" for t in body.get("tools", [])):
            facts = sorted(set(re.findall(r"Please remember: [^.]*\.", json.dumps(messages))))
            return tool_calls(Call("summary", {"text": " ".join(facts) or "Small talk."}))
        last = messages[-1]
        if last["role"] == "tool":
            return text(f"The lookup said {last['content']}.")
        said = str(last["content"])
        if "locker code" in said and "?" in said:
            known = "4417" in json.dumps(messages)
            return text("Your locker code is 4417." if known else "I do not know it.")
        if "look up" in said:
            return tool_calls(Call("lookup", {"item": said.split()[-1]}))
        return text("Noted." + PADDING)


def agent_files(url: str, memory: str, window: int) -> dict[str, str]:
    return {
        "agent.yaml": (
            "name: keeper\n"
            f"model: {{provider: openai, name: gpt-4o-mini, endpoint: {url}, "
            f"api_key: sk-bench, context_window: {window}}}\n"
            "instructions: {inline: Help the user.}\n"
            "tools:\n  - {type: function, name: lookup, file: tools.py, function: lookup}\n"
            f"memory: {memory}\n"
        ),
        "tools.py": "def lookup(item: str) -> str:\n    return f'shelf {item}'\n",
    }


async def run(memory: str, turns: int, window: int) -> dict[str, object]:
    server = Conversing().start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            for name, content in agent_files(server.url, memory, window).items():
                (root / name).write_text(content, encoding="utf-8")
            compactions = 0
            answer = ""
            started = time.perf_counter()
            async with Agent(load_agent(root)) as agent, agent.session() as session:
                for n in range(1, turns + 1):
                    prompt = f"Turn {n}.{PADDING}"
                    if n == 3:
                        prompt = FACT
                    elif n == turns:
                        prompt = "What is my locker code?"
                    elif n % 7 == 0:
                        prompt = f"Turn {n}: please look up item{n}"
                    async for event in session.run(prompt, stream_text=False):
                        if isinstance(event, HistoryCompacted):
                            compactions += 1
                        elif isinstance(event, FinalMessage):
                            answer = event.text
                usage = session.spend.usage
            seconds = time.perf_counter() - started
    finally:
        server.stop()
    sizes = [len(json.dumps(r.body)) for r in server.requests]
    turn_sizes = [
        len(json.dumps(r.body))
        for r in server.requests
        if not any(t["function"]["name"] == "summary" for t in r.body.get("tools", []))
    ]
    return {
        "requests": len(sizes),
        "summary calls": compactions,
        "last request bytes": turn_sizes[-1],
        "last request tokens~": turn_sizes[-1] // 4,
        "largest request tokens~": max(sizes) // 4,
        "mean request tokens~": int(statistics.mean(sizes) / 4),
        "bytes sent in all": sum(sizes),
        "requests over the window": sum(1 for size in sizes if size // 4 > window),
        "requests counted": usage.requests,
        "kept fact": "4417" in answer,
        "seconds": round(seconds, 2),
    }


async def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    window = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
    whole = await run("{max_messages: 100000}", turns, window)
    compacted = await run("{compaction: {at: 0.8, keep_recent: 4}}", turns, window)
    print(f"{turns} turns, context window {window} tokens (compaction at 0.8, keep_recent 4)")
    print(f"{'':26}{'whole history':>16}{'compacted':>14}")
    for key in whole:
        print(f"{key:26}{whole[key]!s:>16}{compacted[key]!s:>14}")


if __name__ == "__main__":
    asyncio.run(main())
