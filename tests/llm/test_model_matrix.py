"""`holodeck test PATH --model A --model B`: every case on each model in one run, one
report with the models side by side. Two scripted OpenAI-compatible servers on 127.0.0.1
stand for the two models (each a provider entry of config.yaml)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_invoke import invoke
from conftest import Write
from scripted_servers import Call, OpenAIServer, text, tool_calls
from yaml_dump import dump

A, B = "alpha/model-a", "beta/model-b"
TOOL = '''
def lookup(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city
    """
    return "sunny"
'''


@pytest.fixture
def servers() -> Iterator[tuple[OpenAIServer, OpenAIServer]]:
    one, two = OpenAIServer().start(), OpenAIServer().start()
    try:
        yield one, two  # type: ignore[misc]
    finally:
        one.stop()
        two.stop()


def suite(write: Write, one: OpenAIServer, two: OpenAIServer) -> Path:
    """Two cases: `greet` (any answer passes), then `weather`, which must call `lookup`."""
    spec: dict[str, Any] = {
        "name": "matrix",
        # the agent's own model is A, priced by its cost block; B has no price
        "model": {
            "provider": "alpha",
            "name": "model-a",
            "cost": {"input_per_million": 1000, "output_per_million": 2000},
        },
        "instructions": {"inline": "Answer briefly."},
        "tools": [{"type": "function", "name": "lookup", "file": "tools.py", "function": "lookup"}],
        "execution": {"max_retries": 0},
        "test_cases": [
            {"name": "greet", "input": "hello"},
            {"name": "weather", "input": "weather in Paris?", "expected_tools": ["lookup"]},
        ],
    }
    providers = {
        "alpha": {"provider": "openai", "endpoint": one.url, "api_key": "sk-a"},
        "beta": {"provider": "openai", "endpoint": two.url, "api_key": "sk-b"},
    }
    return write(
        {
            "agent.yaml": dump(spec),
            "tools.py": TOOL,
            "config.yaml": dump({"providers": providers}),
        }
    )


def script(server: OpenAIServer, calls_the_tool: bool) -> None:
    server.script(text("hi there", input_tokens=100, output_tokens=10))
    if calls_the_tool:
        server.script(
            tool_calls(Call("lookup", {"city": "Paris"}), input_tokens=100, output_tokens=10),
            text("sunny", input_tokens=100, output_tokens=10),
        )
    else:
        server.script(text("no idea", input_tokens=100, output_tokens=10))


def matrix(root: Path, cwd: Path, *more: str) -> Any:
    # one case at a time per model: each scripted server answers in the suite's order
    return invoke(
        "test", str(root), "--model", A, "--model", B, "--concurrency", "1", *more, cwd=cwd
    )


def test_a_two_model_run_reports_both_models_for_every_case_disagreements_first(
    write: Write, servers: tuple[OpenAIServer, OpenAIServer], tmp_path: Path
) -> None:
    one, two = servers
    root = suite(write, one, two)
    script(one, calls_the_tool=True)
    script(two, calls_the_tool=False)

    result = matrix(root, tmp_path, "-o", "run.json")

    assert result.exit_code == 1, result.output  # B failed a case: the run fails
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert run["matrix"] == [A, B]
    status = {c["name"]: (c["model"], c["status"]) for c in run["cases"]}
    assert status == {
        f"greet [{A}]": (A, "pass"),
        f"weather [{A}]": (A, "pass"),
        f"greet [{B}]": (B, "pass"),
        f"weather [{B}]": (B, "fail"),
    }
    cost = {c["name"]: c["runs"][0]["cost_usd"] for c in run["cases"]}
    assert cost[f"greet [{A}]"] == (100 * 1000 + 10 * 2000) / 1_000_000  # $0.12
    assert cost[f"greet [{B}]"] is None  # no price for B, rather than 0
    assert [r.body["model"] for r in one.requests] == ["model-a"] * 3
    assert [r.body["model"] for r in two.requests] == ["model-b"] * 2

    for name in ("run.md", "run.html", "run.junit.xml"):
        script(one, calls_the_tool=True)
        script(two, calls_the_tool=False)
        assert matrix(root, tmp_path, "-o", name).exit_code == 1
    markdown = (tmp_path / "run.md").read_text(encoding="utf-8")
    side = markdown.split("## Models side by side")[1].split("## Cases")[0]
    rows = [line for line in side.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| Model | Passed |")
    assert rows[1].startswith(f"| {A} | 2/2 (100%) |") and "$0.360000" in rows[1]  # 300 in, 30 out
    assert rows[2].startswith(f"| {B} | 1/2 (50%) |") and rows[2].endswith("| - |")
    assert "The models disagree on 1 of 2 cases" in side
    assert rows[3] == f"| Case | {A} | {B} |"
    # the case the models disagree on comes first, though the suite lists it second
    assert rows[4].startswith("| **weather (models disagree)** | PASS ·")
    assert "| FAIL ·" in rows[4]
    assert rows[5].startswith("| greet | PASS ·") and rows[5].count("PASS") == 2
    for row in rows[4:6]:
        assert row.count("220 tok") + row.count("110 tok") == 2  # both models' numbers
    html = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert "Models side by side" in html and "weather (models disagree)" in html
    junit = (tmp_path / "run.junit.xml").read_text(encoding="utf-8")
    assert f'name="matrix {B}" value="Model: {B}; Passed: 1/2 (50%)' in junit


def test_a_matrix_run_where_every_model_passes_exits_0_and_compares_like_any_run(
    write: Write, servers: tuple[OpenAIServer, OpenAIServer], tmp_path: Path
) -> None:
    one, two = servers
    root = suite(write, one, two)
    script(one, calls_the_tool=True)
    script(two, calls_the_tool=True)
    passing = matrix(root, tmp_path)
    script(one, calls_the_tool=True)
    script(two, calls_the_tool=False)
    failing = matrix(root, tmp_path)

    compared = invoke("test", str(root), "--compare", "previous", "latest", cwd=tmp_path)

    assert passing.exit_code == 0, passing.output
    assert "The models agree on all 2 cases" in " ".join(passing.output.split())
    assert failing.exit_code == 1
    assert compared.exit_code == 1  # a regression
    said = " ".join(compared.output.split())
    assert "1 regression" in said and f"weather [{B}]" in said


def test_one_model_runs_as_before(
    write: Write, servers: tuple[OpenAIServer, OpenAIServer], tmp_path: Path
) -> None:
    one, two = servers
    root = suite(write, one, two)
    script(two, calls_the_tool=True)

    result = invoke("test", str(root), "--model", B, "-o", "run.json", cwd=tmp_path)

    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert run["matrix"] == [] and run["model"] == B
    assert [c["name"] for c in run["cases"]] == ["greet", "weather"]
    assert "Models side by side" not in result.output
    assert not one.requests


def test_evaluations_matrix_in_agent_yaml_runs_each_case_on_its_models(
    write: Write, servers: tuple[OpenAIServer, OpenAIServer], tmp_path: Path
) -> None:
    one, two = servers
    root = suite(write, one, two)
    spec = (root / "agent.yaml").read_text(encoding="utf-8")
    matrix_block = {
        "evaluations": {"metrics": [{"metric": "contains"}], "matrix": {"models": [A, B]}}
    }
    (root / "agent.yaml").write_text(spec + dump(matrix_block), encoding="utf-8")
    script(one, calls_the_tool=True)
    script(two, calls_the_tool=True)

    result = invoke("test", str(root), "--concurrency", "1", "-o", "run.json", cwd=tmp_path)

    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert run["matrix"] == [A, B] and len(run["cases"]) == 4


def test_a_matrix_entry_that_is_not_a_model_is_refused_at_its_line(
    write: Write, servers: tuple[OpenAIServer, OpenAIServer]
) -> None:
    root = suite(write, *servers)
    spec = (root / "agent.yaml").read_text(encoding="utf-8")
    matrix_block = {
        "evaluations": {"metrics": [{"metric": "contains"}], "matrix": {"models": [A, "gpt-4o"]}}
    }
    (root / "agent.yaml").write_text(spec + dump(matrix_block), encoding="utf-8")

    result = invoke("validate", str(root))

    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "agent.yaml:" in said and "evaluations.matrix.models" in said
    assert "`gpt-4o` is not `provider/name`" in said and "Traceback" not in said
