"""`holodeck test`'s start-up leaves the garbage collector alone: importing pydantic-ai and
the SDKs, loading the definition and building the agent run no collection (walking a
heap that only grows finds nothing), and the collector is given back as it was."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from cli_invoke import invoke
from conftest import Write

AGENT = """
name: probe
model: {provider: test}
instructions: {inline: Call the probe.}
tools:
  - {type: function, name: probe, file: tools.py, function: probe}
test_cases:
  - {name: first, input: Probe now., expected_tools: [probe]}
"""
PLAIN = """
name: plain
model: {provider: test}
instructions: {inline: Answer.}
test_cases:
  - {name: first, input: Hello.}
"""
# the case's tool writes down the collections made so far (the program's own list)
TOOLS = """
import json, sys

def probe() -> str:
    made = sys.modules["__main__"].COLLECTIONS
    with open(sys.modules["__main__"].OUT, "w") as out:
        json.dump(made, out)
    return "probed"
"""
# `holodeck ARGS`, noting each collection and whether pydantic-ai had started loading
PROGRAM = """
import gc, sys
COLLECTIONS = []
OUT = sys.argv.pop(1)
gc.callbacks.append(
    lambda phase, info: phase == "start"
    and COLLECTIONS.append([info["generation"], "pydantic_ai" in sys.modules])
)
from holodeck.cli.main import main
main(sys.argv[1:])
"""


def test_start_up_runs_no_garbage_collection_before_the_first_case(
    write: Write, tmp_path: Path
) -> None:
    root = write({"agent.yaml": AGENT, "tools.py": TOOLS})
    out = tmp_path / "collections.json"
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(out), "test", str(root), "--concurrency", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    collections = json.loads(out.read_text())
    # before pydantic-ai: click and the command's options (the command has not started)
    during_start = [generation for generation, loading in collections if loading]
    assert during_start == [], f"collections from the imports to the first case: {during_start}"


def test_the_collector_is_given_back_as_it_was(write: Write, tmp_path: Path) -> None:
    root = write({"agent.yaml": PLAIN})
    thresholds = gc.get_threshold()
    try:
        gc.set_threshold(500, 7, 9)
        result = invoke("test", str(root), "--model", "test", cwd=tmp_path)
        assert gc.isenabled() and gc.get_threshold() == (500, 7, 9), result.output
        gc.disable()  # a caller that collects itself stays so
        invoke("test", str(root), "--model", "test", cwd=tmp_path)
        assert not gc.isenabled() and gc.get_threshold() == (500, 7, 9)
    finally:
        gc.set_threshold(*thresholds)
        gc.enable()
