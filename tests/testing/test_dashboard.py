"""`holodeck test view`: the runs dashboard's JSON API over a real uvicorn server on a
loopback port, its summary index, and the command itself; over runs saved by real
offline `holodeck test` runs of examples/weather."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2 as httpx
import pytest
from click.testing import CliRunner

from dashboard_runs import HOSTILE_INPUT, WeatherRuns, copy_runs, dashboard, get, weather_runs
from holodeck.cli.main import cli
from holodeck.testing.comparison import compare_runs
from holodeck.testing.dashboard import RunIndex
from holodeck.testing.dashboard._index import UnknownRun
from holodeck.testing.run_store import load_run, save_run
from server_harness import REPO, free_port, until


@pytest.fixture
def weather(tmp_path_factory: pytest.TempPathFactory) -> WeatherRuns:
    return weather_runs(tmp_path_factory)


@pytest.fixture
def runs_copy(weather: WeatherRuns, tmp_path: Path) -> Path:
    return copy_runs(weather, tmp_path / "runs")


def test_the_runs_list_has_each_runs_summary_and_no_cases(
    runs_copy: Path, weather: WeatherRuns
) -> None:
    (runs_copy / "broken.json").write_text('{"run_id": "broken", "cases": [', encoding="utf-8")
    (runs_copy / "notes.json").write_text('{"what": "not a run"}', encoding="utf-8")
    with dashboard(runs_copy) as base:
        response = get(base + "/api/runs")
    assert response.status_code == 200
    body = response.json()
    assert [r["run_id"] for r in body["runs"]] == [weather.before, weather.after]  # oldest first
    for shown in body["runs"]:
        saved = load_run(shown["run_id"], runs_copy)
        assert "cases" not in shown
        assert (shown["passed"], shown["total"], shown["failed"]) == (
            saved.summary.passed,
            saved.summary.total,
            saved.summary.failed,
        )
        assert (shown["agent"], shown["model"], shown["prompt_version"]) == (
            saved.agent,
            saved.model,
            saved.prompt_version,
        )
        f1 = [
            m.score for c in saved.cases for r in c.runs for m in r.metrics if m.name == "f1_score"
        ]
        assert f1 and shown["metrics"]["f1_score"]["mean"] == pytest.approx(sum(f1) / len(f1))
        assert shown["metrics"]["f1_score"]["judged"] is False  # an offline run's scores
    assert body["runs"][1]["failed"] == 1
    assert [s["file"] for s in body["skipped"]] == ["broken.json", "notes.json"]
    assert all("not a saved test run" in s["reason"] for s in body["skipped"])


def test_a_runs_cases_come_whole_on_demand(runs_copy: Path, weather: WeatherRuns) -> None:
    with dashboard(runs_copy) as base:
        response = get(f"{base}/api/runs/{weather.after}")
    assert response.status_code == 200
    saved = load_run(weather.after, runs_copy)
    assert response.json() == json.loads(saved.model_dump_json())
    hostile = next(c for c in response.json()["cases"] if c["name"] == "hostile-input")
    assert hostile["input"] == HOSTILE_INPUT
    call = response.json()["cases"][0]["runs"][0]["turns"][0]["tool_calls"][0]
    assert (call["name"], call["args"]["city"]) == ("get_weather", "Lisbon")


def test_unknown_run_ids_and_paths_out_of_the_directory_are_404(
    runs_copy: Path, weather: WeatherRuns
) -> None:
    # a real run file one level up: a path that climbs out must not reach it
    save_run(
        load_run(weather.before, runs_copy).model_copy(update={"run_id": "secret"}),
        runs_copy.parent,
    )
    with dashboard(runs_copy) as base:
        for ref in ("nope", "..%2Fsecret", "%2E%2E%2Fsecret", ".dashboard-index", "..", "secret"):
            response = get(f"{base}/api/runs/{ref}")
            assert response.status_code == 404, ref
            assert response.json()["error"]["type"] == "not_found", ref
        named = get(f"{base}/api/runs/nope").json()["error"]
        assert "no saved run 'nope'" in named["message"] and named["hint"]
    with pytest.raises(UnknownRun):
        RunIndex(runs_copy).load("../secret")


def test_a_run_damaged_deep_inside_is_listed_and_its_cases_are_a_422_saying_so(
    runs_copy: Path, weather: WeatherRuns
) -> None:
    # the summary reads counts and scores; a tool call's name is only read with the cases
    path = runs_copy / f"{weather.after}.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    saved["cases"][0]["runs"][0]["turns"][0]["tool_calls"][0]["name"] = 5
    path.write_text(json.dumps(saved), encoding="utf-8")
    with dashboard(runs_copy) as base:
        listed = [r["run_id"] for r in get(base + "/api/runs").json()["runs"]]
        response = get(f"{base}/api/runs/{weather.after}")
        compared = get(f"{base}/api/compare?run={weather.before}&run={weather.after}")
    assert listed == [weather.before, weather.after]
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["type"] == "damaged_run"
    assert "not a saved test run (cases.0.runs.0.turns.0.tool_calls.0.name" in error["message"]
    assert compared.status_code == 422


def test_compare_lists_the_regression_first_and_reuses_the_two_run_comparison(
    runs_copy: Path, weather: WeatherRuns
) -> None:
    with dashboard(runs_copy) as base:
        # given newest first: the runs are compared oldest first all the same
        response = get(f"{base}/api/compare?run={weather.after}&run={weather.before}")
        too_few = get(f"{base}/api/compare?run={weather.after}")
        unknown = get(f"{base}/api/compare?run={weather.after}&run=nope")
    assert response.status_code == 200
    series = response.json()
    assert [r["run_id"] for r in series["runs"]] == [weather.before, weather.after]
    verdicts = [(c["case"], c["verdict"]) for c in series["cases"]]
    assert verdicts[0] == ("current-weather", "regression")
    assert ("hostile-input", "new") in verdicts
    assert {v for c, v in verdicts if c not in ("current-weather", "hostile-input")} == {
        "unchanged"
    }
    assert series["cases"][0]["statuses"] == ["pass", "fail"]
    assert any("get_weather" in p for p in series["cases"][0]["problems"])
    expected = compare_runs(load_run(weather.before, runs_copy), load_run(weather.after, runs_copy))
    assert series["steps"] == [json.loads(expected.model_dump_json())]
    assert too_few.status_code == 400 and too_few.json()["error"]["type"] == "invalid_request"
    assert unknown.status_code == 404


def test_summaries_are_read_once_per_file_version(runs_copy: Path, weather: WeatherRuns) -> None:
    first, _ = RunIndex(runs_copy).digests()
    assert (runs_copy / ".dashboard-index").is_file()
    # the same size and mtime: a new index (a new dashboard) answers from the saved digest
    path = runs_copy / f"{weather.before}.json"
    stat = path.stat()
    path.write_bytes(b" " * stat.st_size)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    again, skipped = RunIndex(runs_copy).digests()
    assert again == first and not skipped
    # a changed file is read again: here it is damaged now, so it is skipped and counted
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    index = RunIndex(runs_copy)
    left, skipped = index.digests()
    assert [d.run_id for d in left] == [weather.after]
    assert [s.file for s in skipped] == [path.name]
    # a run saved again with tags shows them on the next look
    tagged = load_run(weather.after, runs_copy).model_copy(update={"tags": ["nightly"]})
    save_run(tagged, runs_copy)
    assert [d.tags for d in index.digests()[0]] == [["nightly"]]


def test_a_saved_run_is_summarised_when_it_is_saved(
    tmp_path: Path, runs_copy: Path, weather: WeatherRuns
) -> None:
    fresh = tmp_path / "fresh"
    path = save_run(load_run(weather.after, runs_copy), fresh)
    assert (fresh / ".dashboard-index").is_file()
    # the file's bytes are no longer a run, but its version is the one saved: the first
    # view answers from the summary written at save time, without parsing the file
    stat = path.stat()
    path.write_bytes(b" " * stat.st_size)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    found, skipped = RunIndex(fresh).digests()
    assert [d.run_id for d in found] == [weather.after] and not skipped
    assert found[0].total == load_run(weather.after, runs_copy).summary.total


def test_a_request_for_another_host_is_refused(runs_copy: Path) -> None:
    with dashboard(runs_copy) as base:
        response = get(base + "/api/runs", Host="rebound.example")
    assert response.status_code == 421
    assert response.json()["error"]["type"] == "wrong_host"


def test_the_page_may_load_only_its_own_files(runs_copy: Path) -> None:
    with dashboard(runs_copy) as base:
        page = get(base + "/")
        script = get(base + "/app.js")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert "innerHTML" not in script.text  # run data reaches the page as text only
    assert not re.search(r"(src|href)=\"(https?:)?//", page.text)


@contextmanager
def view_process(*args: str, cwd: Path) -> Iterator[tuple[str, Callable[[], str]]]:
    """`holodeck test view ARGS --port P --no-open`; its URL once /api/runs answers, and
    a function giving what it printed so far."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    command = [sys.executable, "-m", "holodeck", "test", "view", *args]
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(
            [*command, "--port", str(port), "--no-open"],
            cwd=cwd,
            stdout=output,
            stderr=subprocess.STDOUT,
        )

        def printed() -> str:
            output.seek(0)
            return output.read().decode()

        def answers() -> bool:
            assert process.poll() is None, f"holodeck test view exited: {printed()}"
            try:
                return get(url + "api/runs").status_code == 200
            except httpx.TransportError:
                return False

        try:
            until(answers, what="the dashboard to answer")
            yield url, printed
        finally:
            process.terminate()
            process.wait(20)


def test_holodeck_test_view_of_an_agent_serves_the_runs_saved_where_it_was_tested(
    weather: WeatherRuns,
) -> None:
    # `holodeck test weather` ran in the project: its runs are there, not in weather/
    with view_process("weather", cwd=weather.project) as (url, printed):
        listed = [r["run_id"] for r in get(url + "api/runs").json()["runs"]]
        assert listed == [weather.before, weather.after]
        assert f"Runs dashboard: {url}  (2 runs in .holodeck/runs)" in printed()
    with view_process(str(weather.runs), cwd=REPO) as (url, _):  # a runs directory
        assert len(get(url + "api/runs").json()["runs"]) == 2


def test_a_directory_without_saved_runs_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    previous = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["test", "view", "empty", "--no-open"])
    finally:
        os.chdir(previous)
    assert result.exit_code == 2
    assert "no saved runs in empty/.holodeck/runs" in result.output
    assert "Traceback" not in result.output


def test_the_testing_guides_dashboard_example_runs_as_written(tmp_path: Path) -> None:
    """The guide's commands, run in order (the dashboard on a free port), print what the
    guide shows, and the dashboard then lists the run."""
    doc = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    section = doc.split("## The runs dashboard", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    first, second, *shown = block.strip().splitlines()
    assert first == "$ holodeck test examples/weather --model test"
    assert second == "$ holodeck test view --no-open"
    (tmp_path / "examples").symlink_to(REPO / "examples")
    env = {**os.environ, "HOLODECK_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "holodeck", *first.split()[2:]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout
    with view_process(cwd=tmp_path) as (url, printed):
        assert len(get(url + "api/runs").json()["runs"]) == 1
        said = until(lambda: "Ctrl+C" in printed() and printed(), what="the URL line")
    port = url.rsplit(":", 1)[1].strip("/")
    assert said.splitlines()[:2] == [line.replace("8765", port) for line in shown]
