"""What long-term memory's extraction costs per turn: the tokens of the extraction
request against the turn's own, as the user's known memories grow.

Run: .venv/bin/python bench/memory_extraction.py [turns]   (default 10)

An agent with `memory.long_term: {extract: {auto: true}}` talks to a scripted
OpenAI-compatible server on 127.0.0.1 (the real openai SDK over real HTTP, in-process);
its embeddings come from a scripted embeddings server. Before the conversation the user
is given K known memories (written in one batch, `MemoryBank.remember_many`); then each
turn tells the agent one new fact, the scripted model answers in a line, and, asked with
the `memories` tool offered, extracts that fact. Request sizes are the JSON bodies the
server received; tokens are estimated at four bytes of that JSON each (a tokenizer counts
fewer). "requests counted" is the session's usage, extraction calls included.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from holodeck.config.loader import load_agent
from holodeck.memory import MemoryOwner, open_bank
from holodeck.runtime import Agent, FinalMessage, tool_context
from scripted_servers import Call, EmbeddingsServer, OpenAIServer, Step, text, tool_calls

KNOWN = (0, 5, 50, 500, 5000)
TOPICS = ["tea", "trains", "Lyon", "chess", "piano", "bees", "rye bread", "golf", "Oslo"]


class Extracting(OpenAIServer):
    def _next(self) -> Step:
        body = self.requests[-1].body
        said = str(body["messages"][-1]["content"])
        if any(t["function"]["name"] == "memories" for t in body.get("tools", [])):
            told = said.split("User: ", 1)[-1].split("\n", 1)[0]
            return tool_calls(Call("memories", {"facts": [{"text": f"The user said: {told}"}]}))
        return text("Noted, thank you.")


def agent_yaml(url: str, embeddings: str) -> str:
    return (
        "name: keeper\n"
        f"model: {{provider: openai, name: gpt-4o-mini, endpoint: {url}, api_key: sk-bench}}\n"
        "embedding_provider: {provider: openai, name: text-embedding-3-small, "
        f"endpoint: {embeddings}, api_key: sk-bench}}\n"
        "instructions: {inline: Help the user and keep what matters about them.}\n"
        "memory:\n  long_term: {extract: {auto: true}}\n"
    )


def is_extraction(body: dict[str, object]) -> bool:
    tools = body.get("tools") or []
    assert isinstance(tools, list)
    return any(t["function"]["name"] == "memories" for t in tools)


async def run(known: int, turns: int) -> dict[str, object]:
    server, embeddings = Extracting().start(), EmbeddingsServer().start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            (root / "agent.yaml").write_text(agent_yaml(server.url, embeddings.url))
            spec = load_agent(root)
            async with Agent(spec) as agent:
                bank = open_bank(spec, tool_context(spec, agent.options, agent.hosting))
                assert bank is not None
                async with bank:
                    facts = [
                        f"Fact {n}: the user likes {TOPICS[n % len(TOPICS)]} number {n}"
                        for n in range(known)
                    ]
                    await bank.remember_many(MemoryOwner("local"), facts)
                async with agent.session() as session:
                    for n in range(turns):
                        topic = TOPICS[n % len(TOPICS)]
                        async for event in session.run(f"I started {topic} lessons, week {n}."):
                            assert not isinstance(event, FinalMessage) or event.text
                    usage = session.spend.usage
    finally:
        server.stop()
        embeddings.stop()
    bodies = [r.body for r in server.requests]
    extraction = [len(json.dumps(b)) // 4 for b in bodies if is_extraction(b)]
    answering = [len(json.dumps(b)) // 4 for b in bodies if not is_extraction(b)]
    return {
        "extraction tokens~ (mean)": int(statistics.mean(extraction)),
        "extraction tokens~ (max)": max(extraction),
        "turn request tokens~": int(statistics.mean(answering)),
        "extraction share": f"{sum(extraction) / (sum(extraction) + sum(answering)):.0%}",
        "requests counted": usage.requests,
    }


async def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    results = {k: await run(k, turns) for k in KNOWN}
    print(f"{turns} turns, one new fact each; columns: memories known before the conversation")
    print(f"{'':28}" + "".join(f"{k:>8}" for k in KNOWN))
    for key in results[KNOWN[0]]:
        print(f"{key:28}" + "".join(f"{results[k][key]!s:>8}" for k in KNOWN))


if __name__ == "__main__":
    asyncio.run(main())
