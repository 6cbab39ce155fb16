"""What A2A costs per turn over /v1/chat: the same agent, the same offline model, the same
HTTP client, against a real `holodeck deploy`.

Each round sends one `/v1/chat` turn and one A2A `message/send` turn (and, streamed, one
`/v1/chat` with `stream: true` and one `message/stream`), alternating so that drift in
the machine's load hits both; each side continues its own conversation, so the history
grows alike. The difference is what the A2A layer adds: the JSON-RPC parsing and
protobuf messages of the a2a-sdk, and the task's records in the session store.

Run: .venv/bin/python bench/a2a_overhead.py [turns]
Target: an A2A turn <= 1.3x a /v1/chat turn.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx

WARMUP = 20
AGENT_YAML = """
name: bench
model: {provider: test}
instructions: {inline: You answer.}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_up(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"holodeck deploy exited {process.returncode}")
        try:
            if httpx.get(url + "/ready", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit("holodeck deploy did not get ready in 90 s")


def rpc(method: str, text: str, context_id: str) -> dict[str, Any]:
    message = {
        "messageId": os.urandom(8).hex(),
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        "contextId": context_id,
    }
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}


def turns(client: httpx.Client) -> dict[str, Callable[[], None]]:
    def chat() -> None:
        body = {"message": "hello", "session_id": "bench-chat"}
        assert client.post("/v1/chat", json=body).json()["response"]

    def a2a() -> None:
        reply = client.post("/a2a/bench", json=rpc("message/send", "hello", "bench-a2a")).json()
        assert reply["result"]["status"]["state"] == "completed"

    def chat_stream() -> None:
        body = {"message": "hello", "session_id": "bench-chat-stream", "stream": True}
        with client.stream("POST", "/v1/chat", json=body) as response:
            assert b"event: final" in response.read()

    def a2a_stream() -> None:
        body = rpc("message/stream", "hello", "bench-a2a-stream")
        with client.stream("POST", "/a2a/bench", json=body) as response:
            assert b'"completed"' in response.read()

    return {"chat": chat, "a2a": a2a, "chat stream": chat_stream, "a2a stream": a2a_stream}


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "agent.yaml").write_text(AGENT_YAML, encoding="utf-8")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "HOLODECK_HOME": str(root / "home")}
        process = subprocess.Popen(
            [sys.executable, "-m", "holodeck", "deploy", str(root), "--port", str(port)],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_up(url, process)
            with httpx.Client(base_url=url, timeout=30) as client:
                sides = turns(client)
                for _ in range(WARMUP):
                    for turn in sides.values():
                        turn()
                samples: dict[str, list[float]] = {name: [] for name in sides}
                for _ in range(count):
                    for name, turn in sides.items():
                        start = time.perf_counter()
                        turn()
                        samples[name].append((time.perf_counter() - start) * 1000)
        finally:
            process.terminate()
            process.wait(30)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    p90 = {name: statistics.quantiles(values, n=10)[-1] for name, values in samples.items()}
    print(f"ms per turn over {count} turns each (after {WARMUP} warm-up rounds), offline model")
    print(f"{'turn':>12}  {'median':>7}  {'p90':>7}")
    for name in samples:
        print(f"{name:>12}  {medians[name]:>7.2f}  {p90[name]:>7.2f}")
    ratio = medians["a2a"] / medians["chat"]
    streamed = medians["a2a stream"] / medians["chat stream"]
    print(f"A2A turn: {ratio:.2f}x a /v1/chat turn (target <= 1.3x)")
    print(f"A2A streamed turn: {streamed:.2f}x a streamed /v1/chat turn")


if __name__ == "__main__":
    main()
