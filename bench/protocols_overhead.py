"""Per-turn overhead of each protocol over /v1/chat: the same turn (examples/weather with
the offline `test` model: two tool calls and an answer) asked of one `holodeck deploy`
process through each protocol, one turn at a time, each turn in a new session.

Run: .venv/bin/python bench/protocols_overhead.py [--turns 100]

Prints, per protocol, the median and p90 time of a turn as its client sees it (request
to the last byte of the answer), the overhead over /v1/chat's median and over streamed
/v1/chat's (the fair baseline of a protocol that streams the answer's text as it comes),
and the first turn on that protocol (opening its client, MCP's `initialize` included;
the server loads the protocol's library then: ag-ui-protocol for AG-UI, the MCP SDK).
Clients: httpx2 for /v1/chat, AG-UI (the whole event stream read), the Responses API
(`POST /v1/responses`) and A2A (JSON-RPC `SendMessage`, blocking; and with
`returnImmediately`, then `GetTask` polled every 2 ms until the task ends: the time a
client that does not wait on the connection sees), the official `mcp` client (one open
session, one tool call a turn) for MCP.

A protocol is one function `async def turn(url, client) -> str` (the answer's text)
added to TURNS; `--only NAME` measures some of them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2

REPO = Path(__file__).resolve().parent.parent
QUESTION = "Weather in Oslo? /call *"

# a protocol's turn: (server url, what its `client` context gave) -> the answer's text
Turn = Callable[[str, Any], Awaitable[str]]


async def chat_turn(url: str, http: httpx2.AsyncClient) -> str:
    answer = await http.post(url + "/v1/chat", json={"message": QUESTION})
    answer.raise_for_status()
    text: str = answer.json()["response"]
    return text


async def chat_stream_turn(url: str, http: httpx2.AsyncClient) -> str:
    text = []
    body = {"message": QUESTION, "stream": True}
    async with http.stream("POST", url + "/v1/chat", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("data:") and '"text"' in line:
                data = json.loads(line[5:])
                if set(data) == {"text", "agent"}:
                    text.append(data["text"])
    return "".join(text)


async def agui_turn(url: str, http: httpx2.AsyncClient) -> str:
    body = {
        "threadId": uuid.uuid4().hex,
        "runId": "run-1",
        "messages": [{"id": "m-1", "role": "user", "content": QUESTION}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    text = []
    async with http.stream("POST", url + "/awp", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                event = json.loads(line[5:])
                if event["type"] == "TEXT_MESSAGE_CONTENT":
                    text.append(event["delta"])
                elif event["type"] == "RUN_ERROR":
                    raise RuntimeError(event["message"])
    return "".join(text)


async def responses_turn(url: str, http: httpx2.AsyncClient) -> str:
    body = {"model": "weather", "input": QUESTION, "store": False}
    answer = await http.post(url + "/v1/responses", json=body)
    answer.raise_for_status()
    text: str = answer.json()["output"][-1]["content"][0]["text"]
    return text


async def a2a_call(http: httpx2.AsyncClient, url: str, method: str, params: Any) -> Any:
    body = {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method, "params": params}
    answer = await http.post(url + "/a2a/weather", json=body, headers={"A2A-Version": "1.0"})
    answer.raise_for_status()
    reply = answer.json()
    if "error" in reply:
        raise RuntimeError(reply["error"])
    return reply["result"]


def a2a_message() -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": QUESTION}]}


def a2a_answer(task: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for a in task.get("artifacts", []) for p in a["parts"])


async def a2a_turn(url: str, http: httpx2.AsyncClient) -> str:
    result = await a2a_call(http, url, "SendMessage", {"message": a2a_message()})
    return a2a_answer(result["task"])


async def a2a_later_turn(url: str, http: httpx2.AsyncClient) -> str:
    params = {"message": a2a_message(), "configuration": {"returnImmediately": True}}
    task = (await a2a_call(http, url, "SendMessage", params))["task"]
    while task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
        await asyncio.sleep(0.002)
        task = await a2a_call(http, url, "GetTask", {"id": task["id"]})
    return a2a_answer(task)


async def mcp_turn(url: str, session: Any) -> str:
    result = await session.call_tool("weather", {"question": QUESTION})
    if result.is_error:
        raise RuntimeError(result.content[0].text)
    text: str = result.structured_content["response"]
    return text


@asynccontextmanager
async def http_client(url: str) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(timeout=60) as http:
        yield http


@asynccontextmanager
async def mcp_client(url: str) -> AsyncIterator[Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with AsyncExitStack() as stack:
        read, write, *_ = await stack.enter_async_context(streamable_http_client(url + "/mcp"))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        yield session


# name -> (its turn, the client its turns share); /v1/chat first: the baseline (and
# /v1/chat streamed, the baseline of the protocols that stream the answer)
TURNS: dict[str, tuple[Turn, Callable[[str], Any]]] = {
    "chat": (chat_turn, http_client),
    "chat-stream": (chat_stream_turn, http_client),
    "ag-ui": (agui_turn, http_client),
    "responses": (responses_turn, http_client),
    "a2a": (a2a_turn, http_client),
    "a2a-later": (a2a_later_turn, http_client),
    "mcp": (mcp_turn, mcp_client),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def measure(url: str, name: str, turns: int) -> dict[str, float]:
    turn, client = TURNS[name]
    if name == "mcp":
        import mcp.client.streamable_http  # noqa: F401  (the client's import is not timed)
    started = time.perf_counter()
    async with client(url) as shared:
        answer = await turn(url, shared)  # the first: loads the protocol's library
        first_ms = (time.perf_counter() - started) * 1000
        assert "Oslo" in answer, answer
        for _ in range(5):  # warm
            await turn(url, shared)
        times = []
        for _ in range(turns):
            began = time.perf_counter()
            await turn(url, shared)
            times.append((time.perf_counter() - began) * 1000)
    times.sort()
    return {
        "first_ms": first_ms,
        "median_ms": statistics.median(times),
        "p90_ms": times[int(len(times) * 0.9) - 1],
    }


async def wait_until_ready(url: str, process: subprocess.Popen[bytes]) -> None:
    async with httpx2.AsyncClient(timeout=2) as http:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"holodeck deploy exited {process.returncode}")
            try:
                if (await http.get(url + "/ready")).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit("holodeck deploy did not become ready in 90 s")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--only", nargs="*", choices=list(TURNS), default=list(TURNS))
    args = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOLODECK_HOME": home}
        command = [sys.executable, "-m", "holodeck", "deploy", str(REPO / "examples/weather")]
        process = subprocess.Popen(
            [*command, "--model", "test", "--port", str(port)],
            env=env,
            cwd=home,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            await wait_until_ready(url, process)
            results = {name: await measure(url, name, args.turns) for name in args.only}
        finally:
            process.terminate()
            process.wait(30)
    cores = os.cpu_count()
    print(f"{args.turns} turns each, one at a time, examples/weather --model test ({cores} cores)")
    head = ("protocol", "median ms", "p90 ms", "vs chat", "x chat", "vs chat-stream", "first ms")
    print(
        f"{head[0]:<12}{head[1]:>10}{head[2]:>9}{head[3]:>10}{head[4]:>8}{head[5]:>16}{head[6]:>10}"
    )
    for name, r in results.items():
        over = [
            f"{r['median_ms'] - results[b]['median_ms']:+.1f}" if b in results else "-"
            for b in ("chat", "chat-stream")
        ]
        ratio = f"{r['median_ms'] / results['chat']['median_ms']:.2f}" if "chat" in results else "-"
        print(
            f"{name:<12}{r['median_ms']:>10.1f}{r['p90_ms']:>9.1f}{over[0]:>10}{ratio:>8}"
            f"{over[1]:>16}{r['first_ms']:>10.0f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
