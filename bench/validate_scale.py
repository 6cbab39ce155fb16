"""`holodeck validate` on agent.yaml files with many test cases, and YAML parsing alone.

Run: PYTHONPATH=src .venv/bin/python bench/validate_scale.py [runs] [--files]
Target: 10,000 test cases (50,000 lines) validate in under 1.5 s, interpreter start included.
Writes `agent.yaml` files with 1,000 and 10,000 cases (5 lines each) to a temporary
directory, times the real command (median of `runs`, default 3; HoloDeck's modules
byte-compiled first, as an installed wheel's are), then the parse alone
with the fast reader and with the round-trip parser it falls back to.
With `--files`, times instead the same cases kept in a `test_cases_file`: inline (for
reference), then JSONL and CSV files (same target).
"""

from __future__ import annotations

import csv
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

HEADER = """\
name: scale
description: Answers questions about the weather.
model:
  provider: openai
  name: gpt-4o-mini
  temperature: 0
instructions:
  inline: You answer questions about the weather, briefly.
tools:
  - type: function
    name: get_weather
    description: Current conditions for a city.
    file: tools.py
    function: get_weather
evaluations:
  metrics:
    - metric: f1_score
      threshold: 0.5
test_cases:
"""
CASE = """\
  - name: case-{i}
    input: What is the weather like in city number {i} right now?
    ground_truth: It is {t} degrees and sunny in city number {i}.
    expected_tools:
      - get_weather
"""
TOOLS = "def get_weather(city: str) -> str:\n    return f'sunny in {city}'\n"


def write_agent(root: Path, cases: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "tools.py").write_text(TOOLS, encoding="utf-8")
    body = "".join(CASE.format(i=i, t=10 + i % 25) for i in range(cases))
    (root / "agent.yaml").write_text(HEADER + body, encoding="utf-8")
    return root / "agent.yaml"


def case_rows(cases: int) -> list[dict[str, str]]:
    """The same cases as `CASE`, as mappings."""
    return [
        {
            "name": f"case-{i}",
            "input": f"What is the weather like in city number {i} right now?",
            "ground_truth": f"It is {10 + i % 25} degrees and sunny in city number {i}.",
        }
        for i in range(cases)
    ]


def write_agent_with_file(root: Path, cases: int, kind: str) -> Path:
    """agent.yaml naming `cases.<kind>`, which holds the same cases as `write_agent`'s."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "tools.py").write_text(TOOLS, encoding="utf-8")
    rows = case_rows(cases)
    if kind == "jsonl":
        text = "".join(
            json.dumps({**row, "expected_tools": ["get_weather"]}) + "\n" for row in rows
        )
    else:
        out = io.StringIO()
        writer = csv.DictWriter(out, [*rows[0], "expected_tools"], lineterminator="\n")
        writer.writeheader()
        writer.writerows({**row, "expected_tools": "get_weather"} for row in rows)
        text = out.getvalue()
    (root / f"cases.{kind}").write_text(text, encoding="utf-8")
    header = HEADER.removesuffix("test_cases:\n") + f"test_cases_file: cases.{kind}\n"
    (root / "agent.yaml").write_text(header, encoding="utf-8")
    return root / "agent.yaml"


def files_main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for cases in (1_000, 10_000):
            print(f"{cases:>6} cases")
            agents = {"inline": write_agent(Path(tmp) / f"{cases}-inline", cases)}
            for kind in ("jsonl", "csv"):
                agents[kind] = write_agent_with_file(Path(tmp) / f"{cases}-{kind}", cases, kind)
            for label, agent in agents.items():
                took = validate_seconds(agent, runs, roundtrip=False)
                print(f"  validate ({label:<6}) {took:6.2f} s  {cases / took:>9,.0f} cases/s")


def median_seconds(run: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


# The same command with the fast reader switched off: every file goes to the round-trip parser.
ROUNDTRIP = (
    "import sys, holodeck.spec.yaml.source as s; s.parse_fast = lambda *a: None; "
    "from holodeck.cli.main import main; sys.argv = ['holodeck', *sys.argv[1:]]; main()"
)


def validate_seconds(agent: Path, runs: int, roundtrip: bool) -> float:
    head = [sys.executable, "-c", ROUNDTRIP] if roundtrip else [sys.executable, "-m", "holodeck"]
    cmd = [*head, "validate", str(agent)]

    def run() -> None:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"validate failed ({done.returncode}):\n{done.stdout}{done.stderr}")

    return median_seconds(run, runs)


def main() -> None:
    from holodeck.spec.yaml._fast import parse_fast
    from holodeck.spec.yaml._roundtrip import parse_roundtrip
    from test_scale import byte_compile_holodeck

    byte_compile_holodeck()
    args = [a for a in sys.argv[1:] if a != "--files"]
    runs = int(args[0]) if args else 3
    if "--files" in sys.argv[1:]:
        files_main(runs)
        return
    with tempfile.TemporaryDirectory() as tmp:
        for cases in (1_000, 10_000):
            agent = write_agent(Path(tmp) / str(cases), cases)
            text = agent.read_text(encoding="utf-8")
            lines = text.count("\n")
            print(f"{cases:>6} cases, {lines} lines")
            for label, roundtrip in (("fast", False), ("round-trip", True)):
                took = validate_seconds(agent, runs, roundtrip)
                print(f"  validate ({label:<10}) {took:6.2f} s  {lines / took:>9,.0f} lines/s")
            for label, parse in (("fast", parse_fast), ("round-trip", parse_roundtrip)):
                took = median_seconds(partial(parse, text, agent), runs)
                print(f"  parse    ({label:<10}) {took:6.2f} s  {lines / took:>9,.0f} lines/s")


if __name__ == "__main__":
    main()
