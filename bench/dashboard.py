"""The runs dashboard (`holodeck test view`) over many saved runs.

Run: .venv/bin/python bench/dashboard.py [RUNS] [CASES]   (default: 1000 runs of 100 cases)

Saves RUNS generated runs of CASES cases each (every case with a turn, a tool call and
three metrics), then prints: the time to read every run's summary on the first view
(summarised as they were saved), with no index (runs saved by an older holodeck), and with
the index (every later view); then,
with `holodeck test view` started as its own process: the time until it answers, its
first `GET /api/runs` and that answer's size, one run's cases (`GET /api/runs/ID`) and a
comparison of two runs; and, when Debian's Chromium and playwright are there, the time
from opening the page to its runs table and trend charts being drawn (the browser's own
navigation clock: from the request for the page to the runs drawn).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import httpx2 as httpx

from browser import CHROMIUM, chromium_page
from holodeck.testing.dashboard import RunIndex
from holodeck.testing.results import (
    CaseResult,
    CaseRun,
    MetricResult,
    RunSummary,
    TestRun,
    ToolCallRecord,
    TurnRecord,
)
from holodeck.testing.run_store import save_run
from server_harness import free_port

START = datetime(2026, 1, 1, tzinfo=UTC)


def make_case(run: int, number: int) -> CaseResult:
    failing = (run * 7 + number) % 23 == 0
    status = "fail" if failing else "pass"
    question = f"What is the weather in city {number}? " * 4
    answer = f"It is {number % 30} degrees and sunny in city {number}. " * 6
    metrics = [
        MetricResult(
            name="f1_score", kind="nlp", score=0.4 + (number % 6) / 10, threshold=0.5, status=status
        ),
        MetricResult(
            name="relevance",
            kind="ai",
            score=3.0 + (run % 3),
            threshold=3.5,
            scale_max=5.0,
            status=status,
            reason="The answer addresses the question. " * 5,
        ),
        MetricResult(
            name="groundedness",
            kind="rag",
            score=4.0,
            threshold=3.5,
            scale_max=5.0,
            status="pass",
            reason="Every claim is in the retrieved context. " * 5,
        ),
    ]
    call = ToolCallRecord(
        name="get_weather",
        args={"city": f"city {number}", "unit": "celsius"},
        result={
            "city": f"city {number}",
            "temperature": number % 30,
            "conditions": "sunny",
            "details": "x" * 800,
        },
        duration_ms=12.0,
    )
    turn = TurnRecord(
        input=question,
        output=answer,
        tool_calls=[call],
        input_tokens=420,
        output_tokens=60,
        duration_ms=900.0,
    )
    attempt = CaseRun(
        status=status,
        turns=[turn],
        metrics=metrics,
        duration_ms=950.0,
        retrieval_context=["Context passage. " * 30],
    )
    return CaseResult(
        name=f"case-{number:03d}",
        input=question,
        ground_truth=answer,
        runs=[attempt],
        status=status,
        pass_rate=0.0 if failing else 1.0,
    )


def make_runs(directory: Path, runs: int, cases: int) -> int:
    """Saves the runs; returns the size of one file."""
    size = 0
    for number in range(runs):
        found = [make_case(number, n) for n in range(cases)]
        passed = sum(c.status == "pass" for c in found)
        run = TestRun(
            run_id=f"run-{number:05d}",
            agent=f"agent-{number % 3}",
            source="agent.yaml",
            model="openai/gpt-4o" if number % 2 else "anthropic/claude-sonnet-4",
            prompt_version=f"v{number // 100}",
            started_at=START + timedelta(hours=number),
            concurrency=8,
            tags=["nightly"] if number % 5 == 0 else [],
            cases=found,
            summary=RunSummary(total=cases, passed=passed, failed=cases - passed, errors=0),
        )
        size = save_run(run, directory).stat().st_size
    return size


def timed(action: object, repeat: int = 1) -> float:
    """Median seconds `action()` takes."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def page_render(base: str) -> float | None:
    try:
        import playwright.sync_api as sync_api
    except ImportError:
        return None
    if not CHROMIUM.exists():
        return None
    with chromium_page(sync_api, lambda url: url.startswith(base + "/"), 1280, 900) as (
        page,
        problems,
    ):
        page.goto(base + "/")  # once, so the browser's own start is not counted
        page.wait_for_selector("table.runs tbody tr")
        times = []
        for attempt in range(3):
            page.goto(f"{base}/?{attempt}")
            page.wait_for_selector("svg.chart polyline")
            page.wait_for_selector("table.runs tbody tr")
            # from the navigation's start to the runs drawn, by the browser's clock
            mark = page.evaluate("performance.getEntriesByName('runs-rendered')[0].startTime")
            times.append(mark / 1000)
        assert not problems, problems
    return statistics.median(times)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    root = Path(tempfile.mkdtemp(prefix="holodeck-dashboard-"))
    try:
        directory = root / "runs"
        directory.mkdir()
        started = time.perf_counter()
        size = make_runs(directory, runs, cases)
        print(
            f"saved {runs} runs of {cases} cases ({size / 1e6:.2f} MB each) "
            f"in {time.perf_counter() - started:.1f} s"
        )
        # each run was summarised as it was saved: a first view reads only the index
        first_view = timed(lambda: RunIndex(directory).digests())
        print(f"summaries on the first view of runs saved by holodeck: {first_view:.2f} s")
        (directory / ".dashboard-index").unlink()  # runs saved by an older holodeck
        cold = timed(lambda: RunIndex(directory).digests())
        print(f"summaries with no index (runs saved before the index): {cold:.2f} s")
        warm = timed(lambda: RunIndex(directory).digests(), repeat=5)
        index_size = (directory / ".dashboard-index").stat().st_size
        print(
            f"summaries from the index (a new dashboard): {warm * 1000:.0f} ms "
            f"(index {index_size / 1e6:.2f} MB)"
        )
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        command = [
            "-m",
            "holodeck",
            "test",
            "view",
            str(directory),
            "--port",
            str(port),
            "--no-open",
        ]
        started = time.perf_counter()
        server = subprocess.Popen(
            [sys.executable, *command], stdout=subprocess.DEVNULL, env=os.environ
        )
        try:
            with httpx.Client(base_url=base, timeout=120) as client:
                while True:  # the page's file first: the listening socket takes
                    # connections while the app is still starting
                    assert server.poll() is None, "holodeck test view exited"
                    try:
                        client.head("/app.css")
                        break
                    except httpx.TransportError:
                        time.sleep(0.02)
                ready = time.perf_counter() - started
                first = time.perf_counter()
                response = client.get("/api/runs")
                first_api = time.perf_counter() - first
                assert response.status_code == 200 and len(response.json()["runs"]) == runs
                later = timed(lambda: client.get("/api/runs"), repeat=5)
                one = timed(lambda: client.get("/api/runs/run-00010"), repeat=5)
                two = timed(
                    lambda: client.get("/api/compare?run=run-00010&run=run-00011"), repeat=5
                )
            print(f"holodeck test view answering after {ready:.2f} s (start, imports, index read)")
            print(
                f"GET /api/runs, its first: {first_api * 1000:.0f} ms "
                f"({len(response.content) / 1e6:.2f} MB); later: {later * 1000:.0f} ms"
            )
            print(
                f"GET /api/runs/ID ({cases} cases): {one * 1000:.0f} ms; "
                f"GET /api/compare of two runs: {two * 1000:.0f} ms"
            )
            rendered = page_render(base)
            if rendered is None:
                print("page render: skipped (needs /usr/bin/chromium and playwright)")
            else:
                print(
                    f"page opened to its runs table and charts (Chromium): {rendered * 1000:.0f} ms"
                )
        finally:
            server.terminate()
            server.wait(20)
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
