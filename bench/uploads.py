"""Taking agent uploads: how long POST /v1/agents takes, and how fast /health answers
while an upload imports a tool that takes its time.

Run: .venv/bin/python bench/uploads.py [UPLOADS]   (default: 20)

A real server (uvicorn on 127.0.0.1, the `test` model) takes UPLOADS versions of a small
image (one tool, one helper), each replacing the last; then one whose tool sleeps 2 s at
import, during which /health is asked every 50 ms. Uploads are loaded in a worker thread,
so /health should answer in milliseconds throughout.
"""

from __future__ import annotations

import io
import shutil
import socket
import statistics
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

import httpx2 as httpx
import uvicorn

from holodeck.server import ServeOptions, create_app

REPO = Path(__file__).resolve().parent.parent
GZIP = {"Content-Type": "application/gzip"}


def image(name: str, tool: str, version: int) -> bytes:
    members = {
        "config.yaml": f"spec_version: 1\nname: {name}\ninstructions: AGENTS.md\n",
        "AGENTS.md": f"Version {version}.\n",
        "tools/python/ask.py": tool,
        "tools/python/helper.py": f"WHO = {version}\n",
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


QUICK = "import helper\n\ndef ask() -> str:\n    '''Asks.'''\n    return str(helper.WHO)\n"
SLOW = "import time\ntime.sleep(2)\n\ndef ask() -> str:\n    '''Slow.'''\n    return 'slow'\n"


def main(uploads: int) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    state = Path(tempfile.mkdtemp(prefix="holodeck-bench-uploads-"))
    options = ServeOptions(
        paths=(str(REPO / "examples" / "weather"),),
        port=port,
        model="test",
        allow_uploads=True,
        state_dir=str(state),
        log_dir=str(state / "logs"),
    )
    config = uvicorn.Config(create_app(options), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        while not server.started:
            time.sleep(0.05)
        with httpx.Client(base_url=url, timeout=60) as client:
            took = []
            for version in range(uploads):
                start = time.perf_counter()
                answer = client.post(
                    "/v1/agents", content=image("bench", QUICK, version), headers=GZIP
                )
                took.append(time.perf_counter() - start)
                assert answer.status_code == 201, answer.text
            print(
                f"POST /v1/agents, {uploads} versions replacing each other: "
                f"median {statistics.median(took) * 1000:.1f} ms, max {max(took) * 1000:.1f} ms"
            )
            posted: list[httpx.Response] = []
            slow = image("slow", SLOW, 0)
            uploading = threading.Thread(
                target=lambda: posted.append(client.post("/v1/agents", content=slow, headers=GZIP))
            )
            uploading.start()
            health = []
            while uploading.is_alive():
                start = time.perf_counter()
                assert client.get("/health").status_code == 200
                health.append(time.perf_counter() - start)
                time.sleep(0.05)
            uploading.join()
            assert posted[0].status_code == 201, posted[0].text
            print(
                f"/health during an upload whose tool sleeps 2 s at import ({len(health)} asks): "
                f"median {statistics.median(health) * 1000:.1f} ms, "
                f"max {max(health) * 1000:.1f} ms"
            )
    finally:
        server.should_exit = True
        thread.join(15)
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
