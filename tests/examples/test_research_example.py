"""The demo's research example (`make demo` runs it offline): every metric it asks for
can be computed on every case, so its offline run reports scores, never ERROR."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_research_example_computes_every_metric_offline(tmp_path: Path) -> None:
    example = str(REPO / "examples" / "research")
    done = subprocess.run(
        [sys.executable, "-m", "holodeck", "test", example, "--model", "test", "-o", "report.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ERROR" not in done.stdout, done.stdout
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    results = [m for c in report["cases"] for r in c["runs"] for m in r["metrics"]]
    assert results and all(m["status"] != "error" for m in results), [
        (m["name"], m.get("error")) for m in results if m["status"] == "error"
    ]
    assert {m["name"] for m in results} >= {"rougeL", "groundedness"}
