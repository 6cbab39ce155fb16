"""What the sandbox adds to a call: one shell command (`true`, start to exit) and one
file read (`cat` of a 4 KiB file), each run in bubblewrap and without it (`type: none`:
the same asyncio subprocess, environment and output capture), and the in-process read of
the file tool (paths resolved inside the workspace). Prints medians and the added ms
(target: under 50 ms).

With `allow_network: true`: what the relay and the proxy add to a call (`true`), and one
HTTP request to a server on 127.0.0.1 (allowed by the policy) made from Python inside the
sandbox, through the relay and the proxy, against the same request made directly.

Run: .venv/bin/python bench/sandbox_overhead.py [N]   (default: 100 calls each)
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from holodeck.net import OutboundPolicy
from holodeck.sandbox import Sandbox
from holodeck.spec.models.network_settings import NetworkSettings
from holodeck.spec.models.sandbox_settings import SandboxSettings
from holodeck.tools.workspace import WorkspaceFiles

# N requests, one connection each, timed one by one: prints the median in ms
TIMED_REQUESTS = """
import statistics, sys, time, urllib.request
url, count = sys.argv[1], int(sys.argv[2])
opener = urllib.request.build_opener()  # the environment's proxies, if any
opener.open(url).read()
times = []
for _ in range(count):
    started = time.perf_counter()
    opener.open(url).read()
    times.append(time.perf_counter() - started)
print(statistics.median(times) * 1000)
"""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


async def _network_rows(workspace: Path, count: int) -> list[tuple[str, float, float]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    url = f"http://127.0.0.1:{port}/"
    try:
        policy = OutboundPolicy.from_settings(NetworkSettings(allow=[f"127.0.0.1:{port}"]))
        networked = Sandbox(workspace, SandboxSettings(allow_network=True), outbound=policy)
        walled = Sandbox(workspace)
        start_with = await _median_ms(lambda: networked.run(["true"]), count)
        start_without = await _median_ms(lambda: walled.run(["true"]), count)
        requests = ["python3", "-c", TIMED_REQUESTS, url, str(count)]
        through = await networked.run(requests)
        direct = await Sandbox(workspace, SandboxSettings(type="none")).run(requests)
        assert urllib.request.urlopen(url).read() == b"ok"
    finally:
        server.shutdown()
        server.server_close()
    return [
        ("`true`, network", start_without, start_with),
        ("HTTP request", float(direct.stdout), float(through.stdout)),
    ]


async def _median_ms(call: Callable[[], Awaitable[object]], count: int) -> float:
    await call()  # the first call checks bubblewrap once: not a call's cost
    times = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


async def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "notes.txt").write_text("x" * 4096)
        walled = Sandbox(workspace)
        plain = Sandbox(workspace, SandboxSettings(type="none"))
        files = WorkspaceFiles(workspace)

        rows = []
        for what, command in (("shell `true`", ["true"]), ("read (cat)", ["cat", "notes.txt"])):
            inside = await _median_ms(lambda c=command: walled.run(c), count)  # type: ignore[misc]
            outside = await _median_ms(lambda c=command: plain.run(c), count)  # type: ignore[misc]
            rows.append((what, outside, inside))

        async def tool_read() -> str:
            return files.read_file("notes.txt")

        in_process = await _median_ms(tool_read, count)
        network = await _network_rows(workspace, count)

    print(f"{count} calls each, median ms")
    print(f"{'call':<18}{'no sandbox':>12}{'bubblewrap':>12}{'added':>10}")
    for what, outside, inside in rows:
        print(f"{what:<18}{outside:>12.2f}{inside:>12.2f}{inside - outside:>10.2f}")
    print(f"{'read_file tool':<18}{in_process:>12.3f}  (in HoloDeck's process, no sandbox needed)")
    print(f"{'allow_network':<18}{'without':>12}{'with':>12}{'added':>10}")
    for what, without, with_network in network:
        print(f"{what:<18}{without:>12.2f}{with_network:>12.2f}{with_network - without:>10.2f}")
    print("(`true`: both in bubblewrap; HTTP request: direct from a plain process, and from")
    print(" the sandbox through the relay and the proxy, which checks the address)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100))
