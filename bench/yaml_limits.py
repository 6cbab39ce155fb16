"""What it costs to refuse an oversized or hostile YAML document, and to accept a large
normal one.

Run: .venv/bin/python bench/yaml_limits.py
Target: the 13 MB agent.yaml of 400,000 keys is refused in under 1 s (it took 65 s and
680 MB before the limits). Each case runs in a process of its own, which reports the
seconds `read_yaml` took and, in a second traced read, the most memory Python held
meanwhile; `holodeck validate` on the 13 MB file is timed whole, interpreter start
included.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = "name: big\nmodel:\n  provider: test\ninstructions:\n  inline: You help.\n"
CASE = (
    "  - name: case-{i}\n"
    "    input: What is the weather like in city number {i} right now?\n"
    "    ground_truth: It is sunny in city number {i}.\n"
    "    expected_tools:\n"
    "      - get_weather\n"
)
MEASURE = """
import json, sys, time, tracemalloc
from pathlib import Path
from holodeck.spec.diagnostics import SpecError
from holodeck.spec.yaml.limits import DEFINITION, TEST_CASES
from holodeck.spec.yaml.source import read_yaml
limits = TEST_CASES if sys.argv[2] == "cases" else DEFINITION
def read():
    try:
        read_yaml(Path(sys.argv[1]), limits)
        return "accepted"
    except SpecError as exc:
        return "refused: " + exc.diagnostics[0].message
clock = time.perf_counter()
outcome = read()
seconds = time.perf_counter() - clock
tracemalloc.start()  # a second read, traced (slower): the memory it holds at its peak
read()
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"seconds": seconds, "mb": peak / 1024 / 1024, "outcome": outcome}))
"""


def write_files(root: Path) -> dict[str, tuple[Path, str, dict[str, str]]]:
    keys = root / "keys.yaml"
    keys.write_text(
        HEADER + "".join(f"key_{i:07d}: value number {i:07d}\n" for i in range(400_000))
    )
    inline = root / "inline.yaml"
    inline.write_text(HEADER + "test_cases:\n" + "".join(CASE.format(i=i) for i in range(10_000)))
    cases = root / "cases.yaml"
    cases.write_text("".join(CASE.format(i=i)[2:].replace("\n  ", "\n") for i in range(50_000)))
    bomb = root / "bomb.yaml"
    layers = ["l0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    layers += [f"l{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    bomb.write_text(HEADER + "\n".join(layers) + "\n")
    raised = {"HOLODECK_MAX_DEFINITION_MB": "16"}
    return {
        "13 MB agent.yaml, 400,000 keys (refused by size)": (keys, "definition", {}),
        "the same, size limit raised to 16 MB (refused by values)": (keys, "definition", raised),
        "alias bomb, 10^9 values expanded (refused by values)": (bomb, "definition", {}),
        "agent.yaml with 10,000 test cases inline (accepted)": (inline, "definition", {}),
        "test cases file of 50,000 cases (accepted)": (cases, "cases", {}),
    }


def measure(path: Path, kind: str, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), kind],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for label, (path, kind, env) in write_files(root).items():
            size = path.stat().st_size / 1024 / 1024
            result = measure(path, kind, env)
            print(
                f"{label:58} {size:6.1f} MB  {result['seconds']:6.3f} s  "
                f"peak {result['mb']:6.1f} MB  {str(result['outcome'])[:60]}"
            )
        clock = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "holodeck", "validate", str(root / "keys.yaml")],
            capture_output=True,
            text=True,
        )
        print(
            f"{'holodeck validate on the 13 MB file (whole command)':58} "
            f"{'':9}  {time.perf_counter() - clock:6.3f} s  exit {done.returncode}"
        )


if __name__ == "__main__":
    main()
