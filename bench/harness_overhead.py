"""The Claude Agent SDK harness's cost per turn against HoloDeck's own loop, both
answering from the same scripted Anthropic Messages server on 127.0.0.1 (no model
latency): one tool call (a HoloDeck Python tool), then a short answer.

The harness starts the Claude Code CLI (a separate process) for every turn; the figures
say what that costs: the CLI's start alone (`claude --version`), a harness turn, and a
HoloDeck turn (pydantic-ai's Anthropic client) on the same agent with `--harness none`.

Run: .venv/bin/python bench/harness_overhead.py [turns]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent
from scripted_servers import AnthropicServer, Call, text, tool_calls

TOOLS_PY = (
    "def lookup(query: str) -> str:\n    '''Look something up.'''\n    return 'found ' + query\n"
)


def agent_yaml(url: str) -> str:
    return f"""
name: bench
model: {{provider: anthropic, name: claude-sonnet-4-5, endpoint: "{url}", api_key: x}}
instructions: {{inline: You look things up.}}
claude: {{}}
tools:
  - {{type: function, name: lookup, file: tools.py, function: lookup}}
"""


async def turns(agent: Agent, server: AnthropicServer, name: str, count: int) -> list[float]:
    took: list[float] = []
    async with agent:
        for _ in range(count):
            server.script(tool_calls(Call(name, {"query": "x"})), text("found it"))
            started = time.perf_counter()
            answer = await agent.answer("look up x")
            took.append(time.perf_counter() - started)
            assert answer.text == "found it", answer.text
    return took


def cli_start() -> list[float]:
    import claude_agent_sdk

    cli = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    took = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([str(cli), "--version"], capture_output=True, check=True)
        took.append(time.perf_counter() - started)
    return took


def main() -> None:
    count = max(2, int(sys.argv[1]) if len(sys.argv) > 1 else 6)
    server = AnthropicServer().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "agent.yaml").write_text(agent_yaml(server.root))
            (root / "tools.py").write_text(TOOLS_PY)
            spec = load_agent(root)
            env = dict(os.environ)
            harness = asyncio.run(
                turns(Agent(spec, RunOptions(env=env)), server, "mcp__holodeck__lookup", count)
            )
            own = asyncio.run(
                turns(
                    Agent(spec, RunOptions(env={**env, "HOLODECK_HARNESS": "none"})),
                    server,
                    "lookup",
                    count,
                )
            )
    finally:
        server.stop()
    start = cli_start()
    print(f"turns: {count} each, one tool call and an answer, scripted server on 127.0.0.1")
    print(f"CLI start (claude --version), median: {statistics.median(start) * 1000:8.0f} ms")
    print(f"HoloDeck turn, first:                  {own[0] * 1000:8.0f} ms")
    print(f"HoloDeck turn, median of the rest:     {statistics.median(own[1:]) * 1000:8.0f} ms")
    print(f"harness turn, first (SDK import too):  {harness[0] * 1000:8.0f} ms")
    print(f"harness turn, median of the rest:      {statistics.median(harness[1:]) * 1000:8.0f} ms")
    extra = statistics.median(harness[1:]) - statistics.median(own[1:])
    print(f"harness overhead per turn:             {extra * 1000:8.0f} ms")


if __name__ == "__main__":
    main()
