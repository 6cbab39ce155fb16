"""`holodeck test view` shows each run's cost: in the JSON listing (`/api/runs`), in the
runs table and on a run's page, "–" where the model has no price. The runs are saved by
real `holodeck test` runs of one agent against a scripted OpenAI-compatible server
answering with known token counts, once priced by a `cost:` block and once not."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
from browser import chromium_page, playwright_api
from cli_invoke import invoke
from conftest import Write
from dashboard_runs import dashboard, get
from holodeck.testing.dashboard import RunIndex
from holodeck.testing.run_store import saved_runs
from scripted_servers import OpenAIServer, text
from yaml_dump import dump

openai_server = scripted_servers.openai_server

IN, OUT = 1000, 200  # tokens of every scripted answer
CASE_COST = float(Decimal(IN * 3 + OUT * 15) / 1_000_000)  # $0.006 at $3 in, $15 out
RUN_COST = float(2 * Decimal(IN * 3 + OUT * 15) / 1_000_000)  # two cases


@dataclass(frozen=True)
class PricedRuns:
    runs: Path  # the .holodeck/runs they were saved in
    priced: str  # run ids
    unpriced: str


def definition(server: OpenAIServer, **model: Any) -> str:
    spec = {
        "name": "priced",
        "model": {
            "provider": "openai",
            "name": "house-model",  # in no price list
            "endpoint": server.url,
            "api_key": "sk-x",
            **model,
        },
        "instructions": {"inline": "Answer briefly."},
        "execution": {"max_retries": 0},
        "test_cases": [{"name": "one", "input": "hi"}, {"name": "two", "input": "hello"}],
    }
    return dump(spec)


@pytest.fixture
def priced_runs(write: Write, openai_server: OpenAIServer, tmp_path: Path) -> PricedRuns:
    """Two saved runs of one agent: the first priced by its `cost:` block, the second with
    the block taken out."""
    cost = {"input_per_million": 3, "output_per_million": 15}
    root = write({"agent.yaml": definition(openai_server, cost=cost)})
    openai_server.script(*(text("fine", input_tokens=IN, output_tokens=OUT) for _ in range(4)))
    project = tmp_path / "project"
    project.mkdir()
    assert invoke("test", str(root), cwd=project).exit_code == 0
    (root / "agent.yaml").write_text(definition(openai_server), encoding="utf-8")
    assert invoke("test", str(root), cwd=project).exit_code == 0
    runs = project / ".holodeck" / "runs"
    priced, unpriced = (path.stem for _, path in saved_runs(runs))
    return PricedRuns(runs, priced, unpriced)


def test_the_runs_listing_carries_each_run_s_cost_and_null_when_unpriced(
    priced_runs: PricedRuns,
) -> None:
    with dashboard(priced_runs.runs) as base:
        listing = get(base + "/api/runs").json()
        whole = get(base + f"/api/runs/{priced_runs.priced}").json()

    costs = {run["run_id"]: run["cost_usd"] for run in listing["runs"]}
    assert costs == {priced_runs.priced: RUN_COST, priced_runs.unpriced: None}
    assert whole["summary"]["cost_usd"] == RUN_COST


def test_runs_listed_by_an_index_without_costs_are_read_again_for_theirs(
    priced_runs: PricedRuns,
) -> None:
    # the index an earlier dashboard wrote: its summaries have no cost
    RunIndex(priced_runs.runs).digests()
    index_file = priced_runs.runs / ".dashboard-index"
    written = json.loads(index_file.read_text(encoding="utf-8"))
    written["format"] = 1
    for entry in written["files"].values():
        entry["digest"].pop("cost_usd")
    index_file.write_text(json.dumps(written), encoding="utf-8")

    with dashboard(priced_runs.runs) as base:
        listing = get(base + "/api/runs").json()

    costs = {run["run_id"]: run["cost_usd"] for run in listing["runs"]}
    assert costs[priced_runs.priced] == RUN_COST


def test_the_runs_table_and_a_run_s_page_show_its_cost(
    priced_runs: PricedRuns, tmp_path: Path
) -> None:
    sync_api = playwright_api()
    expect = sync_api.expect
    with (
        dashboard(priced_runs.runs) as base,
        chromium_page(sync_api, lambda url: url.startswith(base + "/"), 1280, 900) as (
            page,
            problems,
        ),
    ):
        page.set_default_timeout(15_000)
        expect.set_options(timeout=15_000)
        page.goto(base + "/")
        table = page.locator('section[data-agent="priced"] table.runs')
        expect(table.locator("thead")).to_contain_text("Cost")
        priced = table.locator(f'tr[data-run="{priced_runs.priced}"]')
        expect(priced.get_by_test_id("run-cost")).to_have_text(f"${RUN_COST:.6f}")
        unpriced = table.locator(f'tr[data-run="{priced_runs.unpriced}"]')
        expect(unpriced.get_by_test_id("run-cost")).to_have_text("–")

        page.goto(base + f"/#/run/{priced_runs.priced}")
        expect(page.locator(".panel .meta")).to_contain_text(f"cost ${RUN_COST:.6f}")
        expect(page.get_by_test_id("case-cost")).to_have_text([f"${CASE_COST:.6f}"] * 2)
        page.get_by_test_id("case-row").first.click()
        expect(page.get_by_test_id("case-detail")).to_contain_text(f"${CASE_COST:.6f}")
        page.screenshot(path=str(tmp_path / "dashboard-cost.png"), full_page=True)
    assert problems == []
