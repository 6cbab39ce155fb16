"""The runs dashboard's page in headless Chromium, over a real uvicorn server and runs
saved by real offline `holodeck test` runs: the runs and their trend, filters, a case
opened with its turns, tool calls and metrics, a hostile input shown as text, and two
runs compared. The page may reach nothing but its server."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from browser import chromium_page, playwright_api
from dashboard_runs import HOSTILE_INPUT, WeatherRuns, copy_runs, dashboard, weather_runs
from holodeck.testing.results import SimulationRecord, TestRun
from holodeck.testing.run_store import load_run, save_run


@pytest.fixture
def sync_api() -> Any:
    return playwright_api()


@pytest.fixture
def runs(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> tuple[WeatherRuns, Path]:
    """The two runs; the later one tagged `nightly`, of prompt version v2, judged by
    another model."""
    weather = weather_runs(tmp_path_factory)
    copy = copy_runs(weather, tmp_path / "runs")
    later = {
        "tags": ["nightly"],
        "prompt_version": "v2",
        "models": {"agent": "test", "judge": "openai/gpt-4o"},
    }
    save_run(load_run(weather.after, copy).model_copy(update=later), copy)
    return weather, copy


@contextmanager
def page_of(sync_api: Any, runs: Path) -> Iterator[tuple[Any, str, list[str]]]:
    with (
        dashboard(runs) as base,
        chromium_page(sync_api, lambda url: url.startswith(base + "/"), 1280, 900) as (
            page,
            problems,
        ),
    ):
        page.set_default_timeout(15_000)
        sync_api.expect.set_options(timeout=15_000)
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
        yield page, base, problems


def shot(page: Any, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)


def test_the_page_shows_filters_and_compares_runs(
    sync_api: Any, runs: tuple[WeatherRuns, Path], tmp_path: Path
) -> None:
    expect = sync_api.expect
    weather, directory = runs
    with page_of(sync_api, directory) as (page, base, problems):
        page.goto(base + "/")
        agent = page.locator('section[data-agent="weather"]')
        rows = agent.locator("table.runs tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.first).to_have_attribute("data-run", weather.after)  # newest first
        trend = agent.get_by_test_id("trend")
        expect(trend.locator('polyline[data-series="pass rate"]')).to_have_count(1)
        # the offline runs' metrics were never judged: only the pass rate is plotted
        expect(trend.locator("circle")).to_have_count(2)
        expect(agent.get_by_test_id("unplotted")).to_contain_text("f1_score")
        expect(agent).to_contain_text("f1_score")
        shot(page, tmp_path / "dashboard-runs.png")

        page.get_by_test_id("filter-result").select_option("fail")
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-run", weather.after)
        page.get_by_test_id("filter-result").select_option("pass")
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-run", weather.before)
        page.get_by_test_id("filter-result").select_option("")
        page.get_by_test_id("filter-tag").select_option("nightly")
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-run", weather.after)
        page.get_by_test_id("filter-tag").select_option("")
        for name, value in (("filter-version", "v2"), ("filter-model", "openai/gpt-4o")):
            page.get_by_test_id(name).select_option(value)
            expect(rows).to_have_count(1)
            expect(rows.first).to_have_attribute("data-run", weather.after)
            page.get_by_test_id(name).select_option("")
        page.get_by_test_id("filter-model").select_option("test")  # both runs' own model
        expect(rows).to_have_count(2)
        page.get_by_test_id("filter-model").select_option("")
        page.get_by_test_id("filter-to").fill("2000-01-01")
        expect(page.get_by_test_id("no-runs")).to_be_visible()
        page.get_by_test_id("filter-to").fill("")
        expect(rows).to_have_count(2)

        expect(page.get_by_test_id("compare-selected")).to_be_disabled()
        for row in range(2):
            rows.nth(row).locator("input[type=checkbox]").check()
        page.get_by_test_id("compare-selected").click()
        compared = page.get_by_test_id("compare-row")
        expect(compared.first).to_have_attribute("data-verdict", "regression")
        expect(compared.first).to_contain_text("current-weather")
        expect(page.locator('[data-verdict="new"]')).to_contain_text("hostile-input")
        expect(page.locator('[data-verdict="unchanged"]')).to_have_count(3)
        shot(page, tmp_path / "dashboard-compare.png")
    assert problems == []


def test_a_case_opens_with_its_turns_tools_and_metrics_and_html_in_it_is_text(
    sync_api: Any, runs: tuple[WeatherRuns, Path], tmp_path: Path
) -> None:
    expect = sync_api.expect
    weather, directory = runs
    # a tool that failed: its call keeps the error instead of a result
    run = load_run(weather.after, directory)
    call = run.cases[3].runs[0].turns[0].tool_calls[0]
    call.result, call.error = None, "ValueError: the weather service refused <b>Atlantis</b>"
    save_run(run, directory)
    with page_of(sync_api, directory) as (page, base, problems):
        page.goto(base + "/")
        page.get_by_role("link", name=weather.after).click()
        cases = page.get_by_test_id("case-row")
        expect(cases).to_have_count(5)
        cases.filter(has_text="current-weather").click()
        detail = page.get_by_test_id("case-detail")
        expect(detail.get_by_test_id("case-input")).to_have_text(
            "What's the weather like in Lisbon right now?"
        )
        expect(detail).to_contain_text("It is 21 °C and sunny in Lisbon.")  # ground truth
        call = detail.get_by_test_id("tool-call").first
        expect(call).to_contain_text("get_weather")
        expect(call).to_contain_text('"city": "Lisbon"')  # its arguments
        expect(call).to_contain_text("Lisbon")
        expect(detail.get_by_test_id("answer")).not_to_have_text("")
        expect(detail).to_contain_text("Tool check")
        expect(detail).to_contain_text("expected 2")  # why it failed
        for metric in ("f1_score", "relevance", "answers-the-question"):
            expect(detail.locator("table.metrics")).to_contain_text(metric)
        shot(page, tmp_path / "dashboard-case.png")

        cases.filter(has_text="unknown-city").click()
        failed = detail.get_by_test_id("tool-call").first
        expect(failed).to_have_class("tool failed")
        expect(failed).to_contain_text("the weather service refused <b>Atlantis</b>")
        expect(failed).not_to_contain_text("result")

        cases.filter(has_text="hostile-input").click()
        expect(detail.get_by_test_id("case-input")).to_have_text(HOSTILE_INPUT)
        expect(cases.filter(has_text="hostile-input")).to_contain_text(HOSTILE_INPUT)
        assert page.locator("img").count() == 0  # shown as text, never made an element
        shot(page, tmp_path / "dashboard-hostile.png")
    assert problems == []


def test_a_long_history_lists_the_newest_runs_until_asked_for_all(
    sync_api: Any, runs: tuple[WeatherRuns, Path]
) -> None:
    expect = sync_api.expect
    weather, directory = runs
    saved = load_run(weather.before, directory)
    for number in range(58):  # 60 in all
        earlier = saved.started_at - timedelta(days=number + 1)
        save_run(
            saved.model_copy(update={"run_id": f"old-{number:02d}", "started_at": earlier}),
            directory,
        )
    with page_of(sync_api, directory) as (page, base, problems):
        page.goto(base + "/")
        rows = page.locator('section[data-agent="weather"] table.runs tbody tr')
        expect(rows).to_have_count(50)
        expect(rows.first).to_have_attribute("data-run", weather.after)
        page.get_by_test_id("show-all").click()
        expect(rows).to_have_count(60)
        expect(rows.last).to_have_attribute("data-run", "old-57")
        trend = page.get_by_test_id("trend")
        points = trend.locator('polyline[data-series="pass rate"]').get_attribute("points")
        assert len(points.split()) == 60
    assert problems == []


def test_a_simulated_conversation_and_failing_tools_show_in_the_case_and_run(
    sync_api: Any, runs: tuple[WeatherRuns, Path], tmp_path: Path
) -> None:
    expect = sync_api.expect
    weather, directory = runs
    run = load_run(weather.before, directory)
    attempt = run.cases[0].runs[0]
    attempt.simulation = SimulationRecord(
        stopped="gave_up",
        explanation="it never said the temperature",
        turns=len(attempt.turns),
        persona="A hurried traveller.",
        goal="Know whether to take a coat.",
    )
    for case in run.cases:  # every tool call failed: the run names each tool
        for turn in case.runs[0].turns:
            for call in turn.tool_calls:
                call.result, call.error = None, "ConnectionError: weather service down"
    # saved and read back as `holodeck test` would: the counts come from the calls
    save_run(TestRun.model_validate_json(run.model_dump_json()), directory)
    with page_of(sync_api, directory) as (page, base, problems):
        page.goto(base + "/")
        page.get_by_role("link", name=weather.before).click()
        failing = page.get_by_test_id("failing-tool").filter(has_text="get_weather")
        expect(failing).to_contain_text("get_weather: all 3 calls failed")
        expect(failing).to_contain_text("weather service down")
        page.get_by_test_id("case-row").first.click()
        detail = page.get_by_test_id("case-detail")
        expect(detail.get_by_test_id("simulation")).to_contain_text("the user gave up after")
        expect(detail.get_by_test_id("simulation")).to_contain_text("Know whether to take a coat.")
        expect(detail.get_by_test_id("failed-calls")).to_contain_text("failed tool call")
        expect(detail.get_by_test_id("turn").first).to_contain_text("simulated user")
        shot(page, tmp_path / "dashboard-simulation.png")
    assert problems == []


def test_unjudged_metrics_are_not_plotted_and_a_run_page_ends_with_its_table(
    sync_api: Any, runs: tuple[WeatherRuns, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An offline run's canned scores stay off the trend (a judged run's are on it); the
    header names the runs' directory relative to the project; a run page shows its
    cases and nothing after them (no stray `null`)."""
    expect = sync_api.expect
    weather, directory = runs
    judged = load_run(weather.before, directory)
    for case in judged.cases:
        for attempt in case.runs:
            for metric in attempt.metrics:
                metric.judged = metric.name == "f1_score"
    save_run(judged.model_copy(update={"offline": False}), directory)
    monkeypatch.chdir(directory.parent)  # the project the runs are saved in
    with page_of(sync_api, directory) as (page, base, problems):
        page.goto(base + "/")
        expect(page.locator("#where")).to_have_text("runs")
        trend = page.locator('section[data-agent="weather"]').get_by_test_id("trend")
        f1 = trend.locator('polyline[data-series="f1_score"]')
        expect(f1).to_have_count(1)
        assert len(f1.get_attribute("points").split()) == 1  # the judged run only
        expect(trend.locator('polyline[data-series="relevance"]')).to_have_count(0)
        row = page.locator(f'tr[data-run="{weather.after}"]')
        expect(row).to_contain_text("not judged")
        shot(page, tmp_path / "dashboard-judged.png")

        page.get_by_role("link", name=weather.after).click()
        expect(page.get_by_test_id("case-row")).to_have_count(5)
        stray = page.evaluate(
            "[...document.getElementById('view').childNodes]"
            ".filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent)"
        )
        assert stray == []
        expect(page.locator("#view")).not_to_contain_text("null")
        expect(page.locator("#where")).to_have_text("runs")
        shot(page, tmp_path / "dashboard-run.png")
    assert problems == []


def test_an_optimizer_search_is_one_row_until_opened(
    sync_api: Any, runs: tuple[WeatherRuns, Path], tmp_path: Path
) -> None:
    expect = sync_api.expect
    weather, directory = runs
    base_run = load_run(weather.before, directory)
    for number in range(6):
        tags = ["optimize:20260101-s1", f"candidate:{number}", "phase:numeric"]
        later = base_run.started_at + timedelta(seconds=number + 1)
        save_run(
            base_run.model_copy(
                update={"run_id": f"cand-{number}", "tags": tags, "started_at": later}
            ),
            directory,
        )
    with page_of(sync_api, directory) as (page, base, problems):
        page.goto(base + "/")
        agent = page.locator('section[data-agent="weather"]')
        expect(agent.locator("tr[data-run]")).to_have_count(2)  # the two test runs
        search = agent.get_by_test_id("search")
        expect(search).to_have_count(1)
        expect(search).to_contain_text("optimizer search 20260101-s1")
        expect(search).to_contain_text("6 candidates")
        expect(agent).to_contain_text("1 optimizer search (6 candidates)")
        trend = agent.get_by_test_id("trend")
        points = trend.locator('polyline[data-series="pass rate"]').get_attribute("points")
        assert len(points.split()) == 2  # candidates are not the agent's history
        shot(page, tmp_path / "dashboard-search.png")

        agent.get_by_test_id("search-toggle").click()
        candidates = agent.locator("tr.candidate")
        expect(candidates).to_have_count(6)
        expect(candidates.first).to_have_attribute("data-run", "cand-0")
        expect(candidates.first).to_contain_text("candidate 0")
        shot(page, tmp_path / "dashboard-search-open.png")
        agent.get_by_test_id("search-toggle").click()
        expect(candidates).to_have_count(0)
    assert problems == []
