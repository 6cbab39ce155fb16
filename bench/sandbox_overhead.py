"""What the sandbox adds to a call: one shell command (`true`, start to exit) and one
file read (`cat` of a 4 KiB file), each run in bubblewrap and without it (`type: none`:
the same asyncio subprocess, environment and output capture), and the in-process read of
the file tool (paths resolved inside the workspace). Prints medians and the added ms
(target: under 50 ms).

Run: .venv/bin/python bench/sandbox_overhead.py [N]   (default: 100 calls each)
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from holodeck.sandbox import Sandbox
from holodeck.spec.models.sandbox_settings import SandboxSettings
from holodeck.tools.workspace import WorkspaceFiles


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

    print(f"{count} calls each, median ms")
    print(f"{'call':<16}{'no sandbox':>12}{'bubblewrap':>12}{'added':>10}")
    for what, outside, inside in rows:
        print(f"{what:<16}{outside:>12.2f}{inside:>12.2f}{inside - outside:>10.2f}")
    print(f"{'read_file tool':<16}{in_process:>12.3f}  (in HoloDeck's process, no sandbox needed)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100))
