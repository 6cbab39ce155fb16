"""Test case files: what the office extra costs, and what the download cache saves.

Run: .venv/bin/python bench/case_files.py [SIZE_MB]   (default: 8)

Prints the time to import markitdown in a fresh process (paid once per run that sends a
Word, PowerPoint or Excel file), the time to turn one small .docx, .pptx and .xlsx into
text (after the import), and the time to prepare a SIZE_MB file from a URL on a loopback
server: fetched (cache empty), read from the cache, and fetched again with
`cache_enabled: false`.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from holodeck.config.loader import load_agent
from holodeck.testing.case_files import CaseFiles
from holodeck.testing.document_text import office_text
from office_files import make_docx, make_pptx, make_xlsx


def import_time() -> float:
    code = "import time; t = time.perf_counter(); import markitdown; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def conversions() -> dict[str, float]:
    documents = {
        "word": make_docx([f"Paragraph {n} of the contract." for n in range(200)]),
        "powerpoint": make_pptx([(f"Slide {n}", "Body text") for n in range(20)]),
        "excel": make_xlsx({"Orders": [[n, n * 2, n * 3] for n in range(1000)]}),
    }
    office_text(documents["word"], "word")  # the import, paid once
    timings = {}
    for kind, data in documents.items():
        started = time.perf_counter()
        office_text(data, kind)
        timings[kind] = time.perf_counter() - started
    return timings


def serve(body: bytes) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def prepare_once(root: Path) -> float:
    spec = load_agent(root)
    started = time.perf_counter()
    await CaseFiles(spec).prepare(spec.test_cases[0].files or [])
    return time.perf_counter() - started


def downloads(size_mb: int) -> dict[str, float]:
    server = serve(b"x" * (size_mb * 1024 * 1024))
    url = f"http://127.0.0.1:{server.server_address[1]}/big.txt"
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            agent = (
                "name: bench\nmodel: {provider: test}\ninstructions: {inline: Read.}\n"
                "network: {allow: [127.0.0.1]}\nexecution: {cache_enabled: %s}\n"
                f"test_cases:\n  - input: Read it.\n    files: [{{url: '{url}', type: file}}]\n"
            )
            (root / "agent.yaml").write_text(agent % "true")
            fetched = asyncio.run(prepare_once(root))
            cached = asyncio.run(prepare_once(root))
            (root / "agent.yaml").write_text(agent % "false")
            uncached = asyncio.run(prepare_once(root))
    finally:
        server.shutdown()
        server.server_close()
    return {"fetched": fetched, "from the cache": cached, "cache_enabled: false": uncached}


def main() -> None:
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    print(f"import markitdown (fresh process): {import_time():.2f} s")
    for kind, seconds in conversions().items():
        print(f"convert {kind:<10} {seconds * 1000:8.1f} ms")
    for label, seconds in downloads(size_mb).items():
        print(f"{size_mb} MB file, {label:<22} {seconds * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
