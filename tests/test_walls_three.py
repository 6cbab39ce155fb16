"""Walls against hostile and careless input, round three: uploads that fail to start, MCP
clients that hang up, JSON nested without end, A2A refusals in the log, and YAML flow
collections nested thousands deep."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

# --- YAML nested past libyaml's own limit -----------------------------------------------------


def test_yaml_nested_thousands_deep_is_refused_at_the_limit_at_once(tmp_path: Path) -> None:
    for depth, kind in ((2_000, "["), (20_000, "{")):
        opened = "{a: " * depth if kind == "{" else "[" * depth
        closed = "}" * depth if kind == "{" else "]" * depth
        path = tmp_path / "agent.yaml"
        path.write_text(
            "name: deep\nmodel: {provider: test}\ninstructions: {inline: Hi}\n"
            f"metadata: {opened}1{closed}\n",
            encoding="utf-8",
        )
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "holodeck", "validate", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        took = time.monotonic() - started
        said = done.stdout + done.stderr
        assert done.returncode == 2, said
        assert "agent.yaml:4: error: values nest more than 100 levels deep" in said
        assert "recursion" not in said and "Traceback" not in said
        assert took < 10, f"{depth} levels took {took:.1f} s"
