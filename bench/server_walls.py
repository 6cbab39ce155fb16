"""The server's walls under abuse, against a real `holodeck deploy` (test model, a tool
that takes 200 ms):

1. a flood: `--flood` concurrent turns on one session, then one turn of a new session:
   how long the new session waits, and how the flood's turns ended (200 / 429; with the
   default `max_queued_turns_per_session`, 8);
2. `--bodies` concurrent 16 MiB POSTs without a key to a server with keys: how long until
   all are refused, and the server's peak memory (RSS high-water mark, from /proc).

Run: .venv/bin/python bench/server_walls.py [--flood 100] [--bodies 30]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2

TOOL = """
import asyncio

async def pause(note: str) -> str:
    '''Takes a while.'''
    await asyncio.sleep(0.2)
    return "done"
"""
AGENT = """name: walls
model: {provider: test}
instructions: {inline: You help.}
tools: [{type: function, name: pause, file: tools.py, function: pause}]
"""
KEYED = "deployment:\n  auth: {type: api_key, api_keys: [k-bench]}\n"
BODY_BYTES = 16 * 1024 * 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def deploy(root: Path) -> Iterator[tuple[str, int]]:
    """`holodeck deploy` of `root` until the block ends: its URL and process id."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "holodeck", "deploy", str(root), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx2.get(url + "/ready", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit("holodeck deploy did not start")
            time.sleep(0.1)
        yield url, process.pid
    finally:
        process.terminate()
        process.wait(30)


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def flood(url: str, turns: int) -> None:
    limits = httpx2.Limits(max_connections=turns + 10)
    async with httpx2.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
        started = time.perf_counter()
        await client.post("/v1/chat", json={"message": "alone"})
        alone = time.perf_counter() - started
        body = {"message": "again", "session_id": "flooded"}
        flooding = [asyncio.create_task(client.post("/v1/chat", json=body)) for _ in range(turns)]
        # the flood has arrived: its refusals (if any) are back, or it has had 3 s
        deadline = time.monotonic() + 3
        while sum(t.done() for t in flooding) < turns - 9 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        started = time.perf_counter()
        fresh = await client.post("/v1/chat", json={"message": "hello"})
        waited = time.perf_counter() - started
        statuses = collections.Counter(r.status_code for r in await asyncio.gather(*flooding))
    print(
        f"the first turn, alone: {alone:.2f} s; with a flood of {turns} turns on one session, a "
        f"new session answered {fresh.status_code} in {waited:.2f} s; the flood's turns: "
        f"{dict(sorted(statuses.items()))}"
    )


async def bodies(url: str, pid: int, count: int) -> None:
    before = peak_rss_mib(pid)
    payload = b"x" * BODY_BYTES
    json_body = {"Content-Type": "application/json"}
    async with httpx2.AsyncClient(base_url=url, timeout=600) as client:
        started = time.perf_counter()
        answers = await asyncio.gather(
            *(client.post("/v1/chat", content=payload, headers=json_body) for _ in range(count))
        )
        took = time.perf_counter() - started
    statuses = collections.Counter(r.status_code for r in answers)
    print(
        f"{count} keyless 16 MiB bodies: answered {dict(statuses)} in {took:.2f} s; server "
        f"peak RSS {before:.0f} MiB before, {peak_rss_mib(pid):.0f} MiB after"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--flood", type=int, default=100)
    parser.add_argument("--bodies", type=int, default=30)
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "walls"
        root.mkdir()
        (root / "agent.yaml").write_text(AGENT, encoding="utf-8")
        (root / "tools.py").write_text(TOOL, encoding="utf-8")
        with deploy(root) as (url, _):
            asyncio.run(flood(url, args.flood))
        (root / "config.yaml").write_text(KEYED, encoding="utf-8")
        with deploy(root) as (url, pid):
            asyncio.run(bodies(url, pid, args.bodies))


if __name__ == "__main__":
    main()
