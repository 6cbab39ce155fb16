"""What a chat completion request costs before it is sent: the OpenAI SDK's pass over the
body (`async_maybe_transform`, what a plain `AsyncOpenAI` client does) against the
lean body HoloDeck's own clients send (`lean_chat_client`), on bodies like a served
turn's: a system prompt, a history of N messages with tool calls and results, 3 tools.

Run: .venv/bin/python bench/openai_requests.py [repeats]
Prints the median ms per body for each history length, and the ratio.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from typing import Any

from openai._utils import async_maybe_transform
from openai.types.chat import completion_create_params as params

from holodeck.llm.openai_requests import lean_body


def body(messages: int) -> dict[str, Any]:
    history: list[dict[str, Any]] = [{"role": "system", "content": "You look things up."}]
    for n in range(messages):
        if n % 3 == 0:
            history.append({"role": "user", "content": f"Question {n}: what is the weather?"})
        elif n % 3 == 1:
            call = {"id": f"c{n}", "type": "function", "function": {"name": "weather"}}
            call["function"]["arguments"] = json.dumps({"city": "Lisbon", "days": n})
            history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        else:
            history.append({"role": "tool", "tool_call_id": f"c{n - 1}", "content": "21 °C"})
    tool = {
        "type": "function",
        "function": {
            "name": "weather",
            "description": "Weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
    return {
        "model": "gpt-4o-mini",
        "messages": history,
        "tools": [tool, tool, tool],
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.2,
    }


async def median_ms(work: Any, data: dict[str, Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        await work(data)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def main(repeats: int) -> None:
    async def sdk(data: dict[str, Any]) -> Any:
        return await async_maybe_transform(data, params.CompletionCreateParamsStreaming)

    async def lean(data: dict[str, Any]) -> Any:
        return lean_body(data)

    print(f"{'messages':>8} {'SDK ms':>8} {'lean ms':>8} {'ratio':>6}")
    for messages in (1, 21, 81):
        data = body(messages)
        assert lean_body(data) == await sdk(data)  # the same body either way
        await sdk(data), await lean(data)  # warm caches
        slow = await median_ms(sdk, data, repeats)
        fast = await median_ms(lean, data, repeats)
        print(f"{messages:>8} {slow:>8.3f} {fast:>8.3f} {slow / fast:>6.1f}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
