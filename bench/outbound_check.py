"""What the outbound policy costs a request: a GET to a loopback HTTP server through an
unchecked httpx2 client (as web_fetch made before: each builds its TLS context), then
through the checked client (the address literal, then the name `localhost`, resolved by
the system and checked; one shared TLS context), each on a new client as web_fetch does.

Run: .venv/bin/python bench/outbound_check.py [N]   (default: 300 requests each)
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

from holodeck.net import OutboundPolicy, checked_client
from holodeck.spec.models.network_settings import NetworkSettings


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def _timed(make: Any, url: str, count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        async with make() as client:
            response = await client.get(url)
            assert response.status_code == 200
        times.append((time.perf_counter() - started) * 1000)
    return times


async def main(count: int) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    policy = OutboundPolicy.from_settings(NetworkSettings(allow=[f"127.0.0.1:{port}"]))
    cases = [
        ("unchecked (before), 127.0.0.1", lambda: httpx2.AsyncClient(trust_env=False), "127.0.0.1"),
        ("checked, 127.0.0.1", lambda: checked_client(policy), "127.0.0.1"),
        ("checked, localhost (resolved)", lambda: checked_client(policy), "localhost"),
    ]
    print(f"{count} GETs each, a new client per GET (milliseconds)")
    for label, make, host in cases:
        times = await _timed(make, f"http://{host}:{port}/", count)
        median = statistics.median(times)
        p95 = statistics.quantiles(times, n=20)[-1]
        print(f"  {label:32} median {median:6.2f}  p95 {p95:6.2f}")
    server.shutdown()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
