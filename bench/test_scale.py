"""`holodeck test` at scale: the real command against a scripted OpenAI-compatible HTTP
server (HTTP/1.1 keep-alive, 200 ms a call, its own process so its CPU is not counted),
single-call cases with a `contains` metric, concurrency 10.

Run: .venv/bin/python bench/test_scale.py [--from-source] [cases ...]   (default: 40 400 4000)
Prints, per size: wall, CPU per case (user + system of the command, start-up included),
the run phase's CPU per case, the start-up's CPU (all before the first case: the
interpreter, imports, loading), connections the server saw, the command's phases
(`--timings`: wall and CPU) and the run phase against the ideal (cases / concurrency x
200 ms). Targets: CPU per case under 10 ms; run phase <= 1.15x ideal.
Up to 400 cases, the same run with `gc.freeze()` switched off shows what that speed fix in
`cli/run_tests.py` is worth (the fix stays only while this figure shows it).
Then, for reference, the same requests from a bare pydantic-ai agent (its own process,
same model, server and concurrency, no HoloDeck): its CPU per run and run/ideal are the
floor any runner built on pydantic-ai and the OpenAI SDK starts from.

The command runs byte-compiled, as installed packages are (pip compiles every package it
installs; Python writes the bytecode of the rest on first import). This virtualenv holds
sources only and PYTHONDONTWRITEBYTECODE is set, so each start would compile pydantic-ai
and the OpenAI SDK from source again, about 0.7 s of CPU that no installed copy spends:
a warm-up run writes the bytecode into a cache directory of the bench's own
(PYTHONPYCACHEPREFIX), leaving the virtualenv as it is. `--from-source` measures without
it, as this bench did before.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LATENCY_S = 0.2
CONCURRENCY = 10
HOLODECK = Path(sys.executable).parent / "holodeck"


# --- the model server (runs in a child process: `test_scale.py --serve PORT`) -----------


def sse(text: str) -> bytes:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}],
    }
    done = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
    }
    return (
        b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in (chunk, done)) + b"data: [DONE]\n\n"
    )


def whole(text: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
        }
    ).encode()


def response(kind: str, body: bytes) -> bytes:
    head = f"HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {len(body)}\r\n\r\n"
    return head.encode() + body


STREAMED = response("text/event-stream", sse("The order has shipped."))
WHOLE = response("application/json", whole("The order has shipped."))


async def serve(port: int) -> None:
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"(?i)content-length:\s*(\d+)", head)
                body = await reader.readexactly(int(length.group(1))) if length else b""
                if head.startswith(b"GET /connections"):
                    body = str(connections).encode()
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
                    )
                else:
                    await asyncio.sleep(LATENCY_S)
                    streamed = re.search(rb'"stream"\s*:\s*true', body) is not None
                    writer.write(STREAMED if streamed else WHOLE)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


# --- the benchmark --------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def project(cases: int, port: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="holodeck-scale-"))
    lines = [
        "name: shop",
        f"model: {{provider: openai, name: gpt-4o-mini, endpoint: 'http://127.0.0.1:{port}/v1'}}",
        "instructions: {inline: Answer about orders.}",
        "evaluations:",
        "  metrics: [{metric: contains}]",
        "test_cases:",
    ]
    for i in range(cases):
        lines += [
            f"  - name: case-{i}",
            f"    input: Where is order {i}?",
            "    ground_truth: shipped",
        ]
    (root / "agent.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def connections(port: int) -> int:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /connections HTTP/1.1\r\nhost: x\r\n\r\n")
        return int(sock.recv(1000).split(b"\r\n\r\n", 1)[1])


# bytecode of every module the command loads, kept between runs of the bench
PYCACHE = Path(tempfile.gettempdir()) / "holodeck-bench-pycache"
FROM_SOURCE = False  # `--from-source`: dependencies compiled from source on every start


def byte_compile_holodeck() -> None:
    """Compile HoloDeck's modules as installing a wheel does (no-op when up to date)."""
    import compileall

    import holodeck

    compileall.compile_dir(Path(holodeck.__file__).parent, quiet=1)


def command_env() -> dict[str, str]:
    """The environment the command runs in: byte-compiled, as installed (module doc)."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
    if FROM_SOURCE:
        return env
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return {**env, "PYTHONPYCACHEPREFIX": str(PYCACHE)}


def warm_up(port: int) -> None:
    """One small run, so that every module the command loads has its bytecode."""
    if FROM_SOURCE:
        byte_compile_holodeck()
        return
    root = project(2, port)
    subprocess.run(
        [str(HOLODECK), "test", str(root)],
        cwd=root,
        env=command_env(),
        capture_output=True,
        check=True,
    )


@contextmanager
def model_server() -> Iterator[int]:
    """The scripted model server in a process of its own; yields its port once it listens."""
    port = free_port()
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        yield port
    finally:
        server.kill()
        server.wait()


# the command with cli/test.py's gc.freeze() switched off
UNFROZEN = (
    "import gc, sys; gc.freeze = lambda: None; sys.argv[0] = 'holodeck'; "
    "from holodeck.cli.main import main; main()"
)


def measure(cases: int, *, freeze: bool = True) -> None:
    with model_server() as port:
        warm_up(port)
        before = connections(port)
        root = project(cases, port)
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        command = [str(HOLODECK)] if freeze else [sys.executable, "-c", UNFROZEN]
        done = subprocess.run(
            [*command, "test", str(root), "--concurrency", str(CONCURRENCY), "--timings"],
            cwd=root,
            env=command_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"holodeck test failed ({done.returncode}):\n{done.stderr[-2000:]}")
        cpu = (after.ru_utime - used.ru_utime) + (after.ru_stime - used.ru_stime)
        opened = connections(port) - before - 1
        line = done.stderr.split("timings:")[-1]
        timings = {
            name: (float(seconds), float(cpu_seconds))
            for name, seconds, cpu_seconds in re.findall(
                r"(\w+) ([\d.]+) s \(([\d.]+) s CPU\)", line
            )
        }
        ideal = cases / CONCURRENCY * LATENCY_S
        run, run_cpu = timings["run"]
        # all before the first case: the command's CPU less the phases from the run on
        start_up = cpu - sum(timings[name][1] for name in ("run", "save", "report"))
        print(
            ("" if freeze else "without gc.freeze: ")
            + f"{cases:5d} cases: wall {wall:6.2f} s, CPU {cpu:6.2f} s = "
            f"{cpu / cases * 1000:5.1f} ms a case ({run_cpu / cases * 1000:4.1f} ms in the run "
            f"phase, start-up {start_up:.2f} s), {opened} connections; "
            f"run {run / ideal:.2f}x the ideal {ideal:.1f} s; "
            "phases (wall/CPU s) "
            + ", ".join(f"{k} {w:.2f}/{c:.2f}" for k, (w, c) in timings.items())
        )


async def bare_runs(port: int, cases: int) -> None:
    """`cases` runs of a bare pydantic-ai agent, CONCURRENCY at a time; prints the CPU
    and wall time of the runs (imports and the agent's construction apart) and of its
    start (imports and the agent's construction) as JSON."""
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-bench")
    agent = Agent(OpenAIChatModel("gpt-4o-mini", provider=provider), instructions="Answer.")
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(i: int) -> None:
        async with gate:
            result = await agent.run(f"Where is order {i}?")
            assert "shipped" in result.output

    cpu, started = time.process_time(), time.perf_counter()
    start_up = cpu  # the interpreter's, the imports' and the agent's, so far
    await asyncio.gather(*(one(i) for i in range(cases)))
    wall = time.perf_counter() - started
    print(json.dumps({"cpu": time.process_time() - cpu, "wall": wall, "start_up": start_up}))


def measure_bare(cases: int) -> None:
    with model_server() as port:
        done = subprocess.run(
            [sys.executable, __file__, "--bare", str(port), str(cases)],
            env=command_env(),
            capture_output=True,
            text=True,
            check=True,
        )
    numbers = json.loads(done.stdout)
    ideal = cases / CONCURRENCY * LATENCY_S
    print(
        f"{cases:5d} runs of a bare pydantic-ai agent: {numbers['cpu'] / cases * 1000:4.1f} ms "
        f"CPU a run; {numbers['wall'] / ideal:.2f}x the ideal {ideal:.1f} s; "
        f"start-up {numbers['start_up']:.2f} s"
    )


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        asyncio.run(serve(int(sys.argv[2])))
        return
    if sys.argv[1:2] == ["--bare"]:
        asyncio.run(bare_runs(int(sys.argv[2]), int(sys.argv[3])))
        return
    global FROM_SOURCE
    args = sys.argv[1:]
    FROM_SOURCE = "--from-source" in args
    sizes = [int(a) for a in args if a != "--from-source"] or [40, 400, 4000]
    for cases in sizes:
        measure(cases)
    for cases in sizes:
        if cases <= 400:
            measure(cases, freeze=False)
    for cases in sizes:
        measure_bare(cases)


if __name__ == "__main__":
    main()
