"""Run history of one project: `.holodeck/runs` holds the runs of every agent tested in
it and the optimizer's candidates; `holodeck test AGENT --compare previous latest`
compares that agent's own two newest test runs."""

from __future__ import annotations

from pathlib import Path

from click.testing import Result

from cli_invoke import invoke
from conftest import Write
from holodeck.testing.run_store import load_run, save_run

AGENT = """
name: {name}
model: {{provider: openai, name: gpt-4o}}
instructions: {{inline: Help customers.}}
tools:
  - {{type: function, name: order_status, file: tools.py, function: order_status}}
test_cases:
  - name: status
    input: Where is order 42?
    expected_tools: [{{name: order_status, count: {count}}}]
"""
TOOLS = """
def order_status(order_id: str) -> dict:
    return {"order": order_id, "status": "shipped"}
"""


def run(cwd: Path, *args: str) -> Result:
    return invoke(*args, cwd=cwd)


def agent(write: Write, name: str) -> Path:
    return write({"agent.yaml": AGENT.format(name=name, count=1), "tools.py": TOOLS})


def test_compare_previous_latest_stays_within_the_agent(write: Write, tmp_path: Path) -> None:
    shop, weather = agent(write, "shop"), agent(write, "weather")
    project = tmp_path / "project"
    project.mkdir()
    assert run(project, "test", str(shop), "--model", "test").exit_code == 0
    assert run(project, "test", str(weather), "--model", "test").exit_code == 0
    # the shop's case now expects two calls: its second run fails
    definition = shop / "agent.yaml"
    definition.write_text(definition.read_text().replace("count: 1", "count: 2"))
    assert run(project, "test", str(shop), "--model", "test").exit_code == 1
    assert run(project, "test", str(weather), "--model", "test").exit_code == 0
    # an optimizer search of the shop saved a candidate last
    runs = project / ".holodeck" / "runs"
    candidate = load_run("latest", runs, definition.resolve())
    save_run(
        candidate.model_copy(
            update={
                "run_id": "candidate-0",
                "started_at": load_run("latest", runs).started_at.replace(year=2100),
                "tags": ["optimize:s1", "candidate:0"],
            }
        ),
        runs,
    )

    shop_compared = run(project, "test", str(shop), "--compare", "previous", "latest")
    assert shop_compared.exit_code == 1, shop_compared.output  # the shop's own regression
    assert "regress" in shop_compared.output.lower()
    assert "different agents" not in shop_compared.output
    weather_compared = run(project, "test", str(weather), "--compare", "previous", "latest")
    assert weather_compared.exit_code == 0, weather_compared.output
    assert "0 regressions" in weather_compared.output
    assert "different agents" not in weather_compared.output

    # with no agent named (and none in the working directory): the newest test run's agent
    newest = run(project, "test", "--compare", "previous", "latest")
    assert newest.exit_code == 0 and "different agents" not in newest.output

    lonely = agent(write, "lonely")
    refused = run(project, "test", str(lonely), "--compare", "previous", "latest")
    assert refused.exit_code == 2
    assert "needs at least 2 saved runs of" in refused.output
    assert "Traceback" not in refused.output
