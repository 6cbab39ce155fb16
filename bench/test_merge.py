"""`holodeck test merge` of a big sharded suite: 10 shard runs of 10,000 cases in all.

Run: PYTHONPATH=src .venv/bin/python bench/test_merge.py [cases] [shards]
Writes the shard runs (each case one turn with a tool call and two metrics, as an offline
run of a one-tool agent saves them) to a temporary directory, then times the real command
(`holodeck test merge DIR -o merged.json`, HoloDeck's modules byte-compiled first, as an
installed wheel's are): wall time, the child's peak memory (max RSS) and cases/s; then the
same merge in this process, split into reading the files and merging them.
Also: what a `holodeck test` run's details add to its wall time (the settings snapshot,
and the git state: one `git status`), for examples/weather in this repository.
Most of the command's time beyond reading the files is the console report (it lists
every failed case, ~6% here), which `holodeck test` of the same cases spends too.
"""

from __future__ import annotations

import compileall
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import holodeck
from holodeck.config.loader import load_agent
from holodeck.runtime import RunOptions
from holodeck.testing.git_state import git_state
from holodeck.testing.merge import merge_runs
from holodeck.testing.results import (
    CaseResult,
    CaseRun,
    MetricResult,
    RunSummary,
    TestRun,
    ToolCallRecord,
    ToolCheck,
    TurnRecord,
)
from holodeck.testing.run_details import describe
from holodeck.testing.run_store import load_run, save_run
from holodeck.testing.shards import Shard

HOLODECK = Path(sys.executable).parent / "holodeck"
START = datetime(2026, 1, 1, tzinfo=UTC)


def case(number: int) -> CaseResult:
    status = "fail" if number % 17 == 0 else "pass"
    turn = TurnRecord(
        input=f"What is the weather in city {number}?",
        output=f"It is {number % 30} degrees and sunny in city {number}.",
        tool_calls=[
            ToolCallRecord(
                name="get_weather",
                args={"city": f"city {number}"},
                result={"city": f"city {number}", "temp_c": number % 30, "sky": "sunny"},
                duration_ms=1.2,
            )
        ],
        input_tokens=120,
        output_tokens=18,
        duration_ms=210.0,
    )
    metrics = [
        MetricResult(name="f1_score", kind="nlp", score=0.6, threshold=0.5, status="pass"),
        MetricResult(
            name="relevance",
            kind="ai",
            score=4.0,
            threshold=3.5,
            scale_max=5.0,
            status="pass",
            reason="The answer gives the temperature and the sky.",
        ),
    ]
    run = CaseRun(
        status=status,
        turns=[turn],
        tool_check=ToolCheck(passed=status == "pass"),
        metrics=metrics,
        retrieval_context=[f'{{"city": "city {number}", "temp_c": {number % 30}}}'],
        duration_ms=215.0,
    )
    return CaseResult(
        name=f"case-{number:05d}",
        input=turn.input,
        ground_truth=f"{number % 30} degrees, sunny",
        runs=[run],
        status=status,
        pass_rate=1.0 if status == "pass" else 0.0,
    )


def write_shards(directory: Path, total: int, count: int) -> None:
    every = [case(n) for n in range(1, total + 1)]
    for index in range(1, count + 1):
        cases = Shard(index, count).take(every)
        run = TestRun(
            run_id=f"shard-{index:02d}",
            agent="weather",
            source="agent.yaml",
            model="openai/gpt-4o-mini",
            prompt_version="v3",
            started_at=START + timedelta(seconds=index),
            concurrency=10,
            tags=["bench"],
            models={"agent": "openai/gpt-4o-mini", "judge": "openai/gpt-4o-mini"},
            settings={"name": "weather", "model": {"provider": "openai", "name": "gpt-4o-mini"}},
            shard=f"{index}/{count}",
            cases=cases,
            summary=RunSummary.of(cases, 60_000.0),
        )
        save_run(run, directory)


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    compileall.compile_dir(Path(holodeck.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory(prefix="holodeck-merge-") as tmp:
        root = Path(tmp)
        shards = root / "shards"
        clock = time.perf_counter()
        write_shards(shards, total, count)
        size = sum(p.stat().st_size for p in shards.glob("*.json"))
        print(
            f"{count} shard runs, {total:,} cases, {size / 1e6:.1f} MB written in "
            f"{time.perf_counter() - clock:.1f} s"
        )

        clock = time.perf_counter()
        done = subprocess.run(
            [str(HOLODECK), "test", "merge", str(shards), "-o", str(root / "merged.json")],
            cwd=root,
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "120"},
            check=False,
        )
        wall = time.perf_counter() - clock
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if done.returncode not in (0, 1):
            raise SystemExit(f"merge failed ({done.returncode}):\n{done.stderr[-2000:]}")
        print(
            f"holodeck test merge: {wall:.2f} s wall, peak RSS {peak_mb:.0f} MB, "
            f"{total / wall:,.0f} cases/s (exit {done.returncode}, interpreter start included)"
        )

        clock = time.perf_counter()
        runs = [load_run(str(p), root) for p in sorted(shards.glob("*.json"))]
        read = time.perf_counter() - clock
        clock = time.perf_counter()
        merged, _ = merge_runs(runs)
        merging = time.perf_counter() - clock
        assert merged.summary.total == total
        print(
            f"in process: reading {read:.2f} s, merging {merging * 1000:.0f} ms "
            f"({total / (read + merging):,.0f} cases/s)"
        )

    weather = Path(__file__).resolve().parent.parent / "examples" / "weather"
    spec = load_agent(weather, environ={**os.environ, "OPENAI_API_KEY": "unused"})
    options = RunOptions().for_agent(spec)
    for label, work in (
        ("git state (one `git status`)", lambda: git_state(weather)),
        ("all a run's details (settings snapshot + git)", lambda: describe(spec, options)),
    ):
        times = []
        for _ in range(5):
            clock = time.perf_counter()
            work()
            times.append(time.perf_counter() - clock)
        print(f"{label} of examples/weather: median {sorted(times)[2] * 1000:.0f} ms per run")


if __name__ == "__main__":
    main()
