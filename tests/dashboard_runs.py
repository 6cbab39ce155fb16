"""Saved runs for the dashboard's tests, made by real offline `holodeck test --model test`
runs of examples/weather: the first as shipped; the second after a case was changed so
that it fails (it now expects two calls) and a case was added whose input is HTML."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2 as httpx
import pytest

from holodeck.testing.run_store import saved_runs
from server_harness import WEATHER, free_port, until

HOSTILE_INPUT = "<img src=x onerror=alert(1)>"
HOSTILE_CASE = f"""  - name: hostile-input
    input: "{HOSTILE_INPUT}"
    ground_truth: There is no weather data for that.
    expected_tools:
      - name: get_weather
        args: {{city: Atlantis}}
"""


@dataclass(frozen=True)
class WeatherRuns:
    project: Path  # the directory `holodeck test` ran in
    runs: Path  # its .holodeck/runs
    before: str  # run ids: every case passed
    after: str  # current-weather fails, hostile-input is new


def holodeck_test(project: Path, home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "holodeck", "test", "weather", "--model", "test"],
        cwd=project,
        env={**os.environ, "HOLODECK_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr


def make_weather_runs(root: Path) -> WeatherRuns:
    project = root / "project"
    shutil.copytree(WEATHER, project / "weather")
    home = root / "home"
    home.mkdir()
    holodeck_test(project, home)
    definition = project / "weather" / "agent.yaml"
    text = definition.read_text(encoding="utf-8")
    changed = text.replace(
        "        args: {city: Lisbon}\n", "        args: {city: Lisbon}\n        count: 2\n"
    )
    assert changed != text
    definition.write_text(changed + HOSTILE_CASE, encoding="utf-8")
    holodeck_test(project, home)
    runs = project / ".holodeck" / "runs"
    before, after = (path.stem for _, path in saved_runs(runs))
    return WeatherRuns(project, runs, before, after)


_made: dict[str, WeatherRuns] = {}


def weather_runs(factory: pytest.TempPathFactory) -> WeatherRuns:
    """The two runs, made once per test process (shared by the dashboard's test modules)."""
    if "runs" not in _made:
        _made["runs"] = make_weather_runs(factory.mktemp("weather-runs"))
    return _made["runs"]


def copy_runs(weather: WeatherRuns, target: Path) -> Path:
    """The runs in a directory of a test's own, to change freely."""
    target.mkdir()
    for path in weather.runs.glob("*.json"):
        target.joinpath(path.name).write_bytes(path.read_bytes())
    return target


@contextmanager
def dashboard(runs: Path) -> Iterator[str]:
    """The dashboard app over `runs` under uvicorn on a free loopback port; its base URL."""
    import uvicorn

    from holodeck.testing.dashboard import RunIndex, create_dashboard

    port = free_port()
    config = uvicorn.Config(
        create_dashboard(RunIndex(runs)),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        log_config=None,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"dashboard {port}", daemon=True)
    thread.start()
    try:
        until(lambda: server.started or not thread.is_alive(), what="the dashboard to start")
        assert server.started, "the dashboard did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)


def get(url: str, **headers: str) -> httpx.Response:
    return httpx.get(url, headers=headers, timeout=30)
