"""Saved runs (`.holodeck/runs/<run_id>.json`): saving, and finding a run again by id,
prefix, path, `latest` or `previous`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holodeck.testing.run_store import RunLookupError, load_run, save_run, saved_runs
from run_builders import case, make_run


def test_save_run_writes_run_id_json_that_loads_back(tmp_path: Path) -> None:
    runs = tmp_path / ".holodeck" / "runs"
    run = make_run("20250601-0900-abc123", [case("greeting"), case("refund", "fail", score=2.0)])
    path = save_run(run, runs)
    assert path == runs / "20250601-0900-abc123.json"
    assert json.loads(path.read_text("utf-8"))["run_id"] == "20250601-0900-abc123"
    # no partial file left behind: the run and the dashboard's index of saved runs
    assert sorted(p.name for p in runs.iterdir()) == [".dashboard-index", path.name]
    assert load_run("20250601-0900-abc123", runs) == run


def test_save_run_refuses_a_run_id_that_is_not_a_file_name(tmp_path: Path) -> None:
    for bad in ("../escape", "a/b", ".hidden", ""):
        with pytest.raises(ValueError, match="cannot name a file"):
            save_run(make_run(bad, [case("x")]), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_load_run_by_prefix_path_latest_and_previous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    # file names sort the other way round from start times: order comes from started_at
    first = make_run("zz-first", [case("a")], minutes=0)
    second = make_run("mm-second", [case("a", "fail", score=1.0)], minutes=5)
    third = make_run("aa-third", [case("a")], minutes=10)
    for run in (first, second, third):
        save_run(run, runs)

    assert load_run("latest", runs).run_id == "aa-third"
    assert load_run("previous", runs).run_id == "mm-second"
    assert load_run("zz", runs).run_id == "zz-first"
    assert load_run(str(runs / "mm-second.json"), runs).run_id == "mm-second"
    assert [p.stem for _, p in saved_runs(runs)] == ["zz-first", "mm-second", "aa-third"]

    # a path relative to the working directory
    monkeypatch.chdir(runs)
    assert load_run("zz-first.json", tmp_path / "elsewhere").run_id == "zz-first"


def test_load_run_errors_say_what_exists(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    with pytest.raises(
        RunLookupError, match=r"needs at least 1 saved run in .*there are 0 saved runs"
    ):
        load_run("latest", runs)
    with pytest.raises(RunLookupError, match="no runs are saved in"):
        load_run("abc", runs)

    save_run(make_run("run-1", [case("a")]), runs)
    with pytest.raises(
        RunLookupError, match=r"'previous' needs at least 2 saved runs.*there is 1 saved run"
    ):
        load_run("previous", runs)
    save_run(make_run("run-2", [case("a")], minutes=1), runs)
    with pytest.raises(RunLookupError, match="prefix 'run-' is ambiguous: it matches run-1, run-2"):
        load_run("run-", runs)
    with pytest.raises(
        RunLookupError,
        match=r"no saved run matches 'nope' \(recent runs: run-2, run-1; or use latest / previous\)",
    ):
        load_run("nope", runs)
    with pytest.raises(RunLookupError, match="no run file at"):
        load_run(str(tmp_path / "missing.json"), runs)


def test_a_damaged_run_file_is_named_and_skipped_by_latest(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    save_run(make_run("good", [case("a")]), runs)
    (runs / "broken.json").write_text(
        '{"run_id": "broken", "started_at": "2030-01-01T00:00:00"}', "utf-8"
    )
    (runs / "garbage.json").write_text("not json at all", "utf-8")
    assert load_run("latest", runs).run_id == "good"
    with pytest.raises(
        RunLookupError, match=r"broken.json is not a saved test run \(agent: Field required\)"
    ):
        load_run("broken", runs)
    with pytest.raises(RunLookupError, match=r"garbage\.json is not a saved test run"):
        load_run("garbage", runs)


def test_latest_and_previous_are_one_agents_test_runs(tmp_path: Path) -> None:
    """One directory holds the runs of every agent tested there and the optimizer's
    candidates: `previous` is the run before `latest` of the same agent, never another
    agent's run or a candidate saved in between."""
    runs = tmp_path / "runs"
    support, weather = tmp_path / "support" / "agent.yaml", tmp_path / "weather" / "agent.yaml"

    def saved(run_id: str, minutes: int, source: Path, *tags: str) -> None:
        run = make_run(run_id, [case("a")], minutes=minutes)
        save_run(run.model_copy(update={"source": str(source), "tags": list(tags)}), runs)

    saved("support-1", 0, support)
    saved("weather-1", 1, weather)
    saved("support-2", 2, support)
    saved("weather-2", 3, weather)
    saved("candidate-0", 4, support, "optimize:s1", "candidate:0")
    saved("candidate-1", 5, support, "optimize:s1", "candidate:1")

    assert load_run("latest", runs, support).run_id == "support-2"
    assert load_run("previous", runs, support).run_id == "support-1"
    assert load_run("latest", runs, weather).run_id == "weather-2"
    assert load_run("previous", runs, weather).run_id == "weather-1"
    # without an agent: the newest test run's agent, whichever agent that is
    assert load_run("latest", runs).run_id == "weather-2"
    assert load_run("previous", runs).run_id == "weather-1"
    # a run named by id is found whoever it tested
    assert load_run("candidate-1", runs, weather).run_id == "candidate-1"

    other = tmp_path / "other" / "agent.yaml"
    saved("other-1", 6, other)
    with pytest.raises(
        RunLookupError,
        match=r"'previous' needs at least 2 saved runs of .*other/agent\.yaml in .*; "
        r"there is 1 saved run besides 6 of other agents or optimizer searches",
    ):
        load_run("previous", runs, other)
