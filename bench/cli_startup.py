"""Cold start of `holodeck --version` and `holodeck --help`, as a ratio to `python -c pass`;
and a whole offline chat answer, leaving quickly (the program) or the interpreter's way
(`main(args)` called as a library would, which keeps the last garbage collections).

Run: .venv/bin/python bench/cli_startup.py [runs]
Target: `holodeck --version` under 0.3 s on a 2-core machine.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

HOLODECK = [sys.executable, "-m", "holodeck"]
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "weather"
HEAVY = ("pydantic", "pydantic_ai", "openai", "anthropic", "mcp", "torch", "rich")


def timed(cmd: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def imported_modules(args: list[str]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "holodeck", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    script = Path(sys.executable).parent / "holodeck"
    baseline = timed([sys.executable, "-c", "pass"], runs)
    print(f"python -c pass          {baseline * 1000:7.1f} ms  (1.00x)")
    for label, cmd in (
        ("holodeck --version", [str(script), "--version"]),
        ("holodeck --help", [str(script), "--help"]),
        ("python -m holodeck -V", [*HOLODECK, "--version"]),
    ):
        took = timed(cmd, runs)
        print(f"{label:<23} {took * 1000:7.1f} ms  ({took / baseline:.2f}x)")
    heavy = sorted(m for m in imported_modules(["--help"]) if m.split(".")[0] in HEAVY)
    print("heavy modules imported by --help:", ", ".join(heavy) or "none")
    chat = ["chat", str(EXAMPLE), "--model", "test"]
    as_library = [
        sys.executable,
        "-c",
        "import sys; from holodeck.cli.main import main; main(sys.argv[1:])",
        *chat,
    ]
    quick = timed_chat([str(script), *chat], runs)
    full = timed_chat(as_library, runs)
    print(f"offline chat answer     {quick * 1000:7.1f} ms  (leaving quickly)")
    print(f"  the interpreter's way {full * 1000:7.1f} ms  ({full / quick:.2f}x)")


def timed_chat(cmd: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, input=b"hello")
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


if __name__ == "__main__":
    main()
