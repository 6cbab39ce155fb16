"""`holodeck test` end to end with the offline test model: exit codes, filters, repeats,
concurrency, reports, saved runs, cassettes and interruption."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import scripted_servers
from child_signals import foreground
from cli_invoke import invoke
from conftest import Write
from holodeck.cli.main import cli
from scripted_servers import OpenAIServer, text

openai_server = scripted_servers.openai_server

REPO = Path(__file__).resolve().parents[2]
HOLODECK_COMMAND = (sys.executable, "-m", "holodeck")
HEAD = """
name: shop
model: {provider: openai, name: gpt-4o}
instructions: {inline: Help customers.}
tools:
  - {type: function, name: order_status, file: tools.py, function: order_status}
  - {type: function, name: refund, file: tools.py, function: refund}
"""
TOOLS = """
def order_status(order_id: str) -> dict:
    return {"order": order_id, "status": "shipped"}

def refund(order_id: str, amount: float) -> str:
    return f"refunded {amount} on {order_id}"
"""


run = invoke


def project(write: Write, cases: str, extra: str = "") -> Path:
    return write({"agent.yaml": HEAD + extra + "test_cases:\n" + cases, "tools.py": TOOLS})


PASSING = """
  - name: status
    input: Where is order 42?
    ground_truth: order 42, status shipped
    expected_tools:
      - {name: order_status, args: {order_id: "42"}}
"""
FAILING = """
  - name: wants-refund
    input: Refund order 7
    expected_tools: [{name: refund, count: 2}]
"""


def test_passing_run_exits_0_and_saves_the_run(write: Write, tmp_path: Path) -> None:
    root = project(
        write, PASSING, "evaluations:\n  metrics: [{metric: f1_score, threshold: 0.9}]\n"
    )
    result = run("test", str(root), "--model", "test", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert re.search(r"PASS +status", result.output)  # in the report (progress lists failures)
    assert "F1: 1.00 not judged (threshold 0.90)" in result.output  # an offline run
    (saved,) = (tmp_path / ".holodeck" / "runs").glob("*.json")
    data = json.loads(saved.read_text())
    assert data["summary"]["passed"] == 1
    call = data["cases"][0]["runs"][0]["turns"][0]["tool_calls"][0]
    assert call["args"] == {"order_id": "42"} and call["result"]["status"] == "shipped"


def test_a_failing_case_exits_1_and_says_why(write: Write, tmp_path: Path) -> None:
    root = project(write, PASSING + FAILING)
    result = run("test", str(root), "--model", "test", "--concurrency", "1", cwd=tmp_path)
    assert result.exit_code == 1
    assert "FAIL wants-refund" in result.output
    assert "refund: 1 call, expected 2" in result.output


def test_filters_select_cases(write: Write, tmp_path: Path) -> None:
    root = project(write, PASSING + FAILING)
    assert (
        run("test", str(root), "--model", "test", "--case", "status", cwd=tmp_path).exit_code == 0
    )
    assert run("test", str(root), "--model", "test", "-k", "where is", cwd=tmp_path).exit_code == 0
    limited = run(
        "test",
        str(root),
        "--model",
        "test",
        "--rate-limit",
        "600",
        "--case",
        "status",
        cwd=tmp_path,
    )
    assert limited.exit_code == 0, limited.output
    nothing = run("test", str(root), "--model", "test", "-k", "zzz", cwd=tmp_path)
    assert nothing.exit_code == 2 and "no test case matches" in nothing.stderr


def test_configuration_and_execution_errors_have_their_exit_codes(
    write: Write, tmp_path: Path
) -> None:
    broken = write({"agent.yaml": "name: x\nmodel: {provider: openai}\n"})
    result = run("test", str(broken), cwd=tmp_path)
    assert result.exit_code == 2 and "agent.yaml:2" in result.stderr
    no_key = project(write, PASSING)
    result = run("test", str(no_key), cwd=tmp_path)  # the real openai model, no key anywhere
    assert result.exit_code == 2  # the settings lack it: README's configuration code
    assert "OPENAI_API_KEY" in result.stderr and "Traceback" not in result.stderr


def scripted(write: Write, server: OpenAIServer, cases: str) -> Path:
    """An agent whose model is the scripted server (a real model's answers, judged)."""
    model = f"model: {{provider: openai, name: gpt-4o, endpoint: {server.url}, api_key: sk-test}}"
    return write(
        {
            "agent.yaml": HEAD.replace("model: {provider: openai, name: gpt-4o}", model)
            + "test_cases:\n"
            + cases,
            "tools.py": TOOLS,
        }
    )


def test_repeat_reports_pass_rate_and_flags_flaky_cases(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    root = scripted(
        write,
        openai_server,
        "  - name: toss\n    input: toss\n    ground_truth: heads\n"
        "    evaluations: [{metric: exact_match, threshold: 1}]\n",
    )
    openai_server.script(text("heads"), text("tails"), text("heads"), text("tails"))
    result = run(
        "test",
        str(root),
        "--repeat",
        "4",
        "--concurrency",
        "1",
        "-o",
        "run.json",
        cwd=tmp_path,
    )
    assert result.exit_code == 1
    data = json.loads((tmp_path / "run.json").read_text())
    (case,) = data["cases"]
    assert case["pass_rate"] == 0.5 and case["flaky"] is True
    assert [r["status"] for r in case["runs"]] == ["pass", "fail", "pass", "fail"]


def test_cases_run_concurrently(write: Write, tmp_path: Path) -> None:
    tools = """
import asyncio
arrived = asyncio.Event()
seen = []

async def meet(who: str) -> str:
    seen.append(who)
    if len(seen) == 2:
        arrived.set()
    await asyncio.wait_for(arrived.wait(), 5)  # only passes if the other case runs meanwhile
    return "met"
"""
    cases = "".join(
        f"  - {{name: c{i}, input: go, expected_tools: [{{name: meet, args: {{who: p{i}}}}}]}}\n"
        for i in range(2)
    )
    root = write(
        {
            "agent.yaml": "name: m\nmodel: {provider: test}\ninstructions: {inline: go}\n"
            "tools:\n  - {type: function, name: meet, file: tools.py, function: meet}\n"
            "test_cases:\n" + cases,
            "tools.py": tools,
        }
    )
    assert run("test", str(root), "--concurrency", "2", cwd=tmp_path).exit_code == 0


def test_reports_in_every_format(write: Write, tmp_path: Path) -> None:
    root = project(write, PASSING + FAILING)
    for name in ("r.json", "r.md", "r.junit.xml", "r.html"):
        result = run("test", str(root), "--model", "test", "-o", name, cwd=tmp_path)
        assert result.exit_code == 1
        assert (tmp_path / name).stat().st_size > 200
    bad = run("test", str(root), "--model", "test", "-o", "r.pdf", cwd=tmp_path)
    assert bad.exit_code == 2 and ".html" in bad.stderr
    nowhere = run(
        "test",
        str(root),
        "--model",
        "test",
        "-o",
        str(tmp_path / "r.html" / "x.html"),
        cwd=tmp_path,
    )
    assert nowhere.exit_code == 2 and "cannot write the report" in nowhere.stderr
    wrong_model = run("test", str(root), "--model", "gpt4", cwd=tmp_path)
    assert wrong_model.exit_code == 2 and "provider/name" in wrong_model.stderr


def test_compare_finds_regressions(write: Write, tmp_path: Path) -> None:
    root = project(write, PASSING)
    assert run("test", str(root), "--model", "test", cwd=tmp_path).exit_code == 0
    agent_yaml = root / "agent.yaml"
    agent_yaml.write_text(
        agent_yaml.read_text().replace("{name: order_status,", "{count: 2, name: order_status,")
    )
    assert run("test", str(root), "--model", "test", cwd=tmp_path).exit_code == 1
    compared = run("test", "--compare", "previous", "latest", cwd=tmp_path)
    assert compared.exit_code == 1
    assert "status" in compared.output and "regress" in compared.output.lower()


def test_record_then_replay_without_a_key(write: Write, tmp_path: Path) -> None:
    root = project(write, PASSING)
    cassette = tmp_path / "ci.yaml"
    recorded = run("test", str(root), "--model", "test", "--record", str(cassette), cwd=tmp_path)
    assert recorded.exit_code == 0 and cassette.is_file()
    replayed = run("test", str(root), "--replay", str(cassette), cwd=tmp_path)  # openai, no key
    assert replayed.exit_code == 0, replayed.output
    assert run("test", str(root), "--record", "a", "--replay", "b").exit_code == 2


def test_turns_and_per_case_metrics(write: Write, tmp_path: Path) -> None:
    cases = """
  - name: two-turns
    turns:
      - input: Where is order 9?
        expected_tools: [{name: order_status, args: {order_id: "9"}}]
      - input: Refund it
        ground_truth: refunded
        expected_tools: [refund]
    evaluations: [{metric: contains, threshold: 1}]
"""
    root = project(write, cases, "evaluations:\n  metrics: [{metric: bleu, threshold: 0.99}]\n")
    result = run("test", str(root), "--model", "test", "-o", "r.json", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    (case,) = json.loads((tmp_path / "r.json").read_text())["cases"]
    turns = case["runs"][0]["turns"]
    assert [t["tool_calls"][0]["name"] for t in turns] == ["order_status", "refund"]
    assert [m["name"] for m in case["runs"][0]["metrics"]] == ["contains"]  # bleu replaced


def test_an_uncomputable_metric_does_not_fail_the_case_unless_asked(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    case = "  - {name: hello, input: hi}\n"  # no tool is called: no retrieval context
    soft = scripted(write, openai_server, case)
    (soft / "agent.yaml").write_text(
        (soft / "agent.yaml").read_text() + "evaluations:\n  metrics: [{metric: groundedness}]\n"
    )
    hard = scripted(write, openai_server, case)
    (hard / "agent.yaml").write_text(
        (hard / "agent.yaml").read_text()
        + "evaluations:\n  metrics: [{metric: groundedness, fail_on_error: true}]\n"
    )
    openai_server.script(text("Hello."), text("Hello."))
    result = run("test", str(soft), cwd=tmp_path)
    assert result.exit_code == 0 and "ERROR" in result.output
    assert run("test", str(hard), cwd=tmp_path).exit_code == 1


def test_ctrl_c_saves_the_partial_run_and_exits_within_5_s(write: Write, tmp_path: Path) -> None:
    """Ctrl+C while a Python tool sleeps for a minute and an MCP server takes 5 s to stop:
    the finished case is reported and saved, and the command exits 130 at once."""
    marker = tmp_path / "slow-started"
    tools = TOOLS + (
        "\nimport time\nfrom pathlib import Path\n\ndef slow() -> str:\n"
        f"    Path({str(marker)!r}).touch()\n    time.sleep(60)\n    return 'x'\n"
    )
    pids = tmp_path / "mcp.pids"
    server = {
        "type": "mcp",
        "name": "demo",
        "command": sys.executable,
        "args": [str(REPO / "tests" / "mcp_servers" / "demo.py"), "--slow-stop"],
        "env": {"DEMO_PID_FILE": str(pids)},
    }
    root = write(
        {
            "agent.yaml": HEAD
            + "  - {type: function, name: slow, file: tools.py, function: slow}\n"
            + f"  - {json.dumps(server)}\n"
            + "test_cases:\n"
            + PASSING
            + "  - {name: stuck, input: wait, expected_tools: [demo_echo, slow]}\n",
            "tools.py": tools,
        }
    )
    process = subprocess.Popen(
        [
            *HOLODECK_COMMAND,
            "test",
            str(root),
            "--model",
            "test",
            "--concurrency",
            "1",
            "-o",
            "partial.json",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=foreground,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():  # the MCP server is up and the slow tool is sleeping
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        interrupted = time.monotonic()
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
        took = time.monotonic() - interrupted
    finally:
        process.kill()
    assert process.returncode == 130, output
    print(f"exit took {took:.2f} s")
    assert took < 5, f"exit took {took:.1f} s"
    assert "Traceback" not in output and "error:" not in output
    data = json.loads((tmp_path / "partial.json").read_text())
    assert data["interrupted"] is True
    assert [c["name"] for c in data["cases"]] == ["status"]
    saved = list((tmp_path / ".holodeck" / "runs").glob("*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["interrupted"] is True
    server_pid = int(pids.read_text().split()[0])
    assert not Path(f"/proc/{server_pid}").exists() or _zombie(server_pid)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("example", ["weather"])
def test_the_demo_example_passes_offline(example: str, tmp_path: Path) -> None:
    result = run("test", str(REPO / "examples" / example), "--model", "test", cwd=tmp_path)
    assert result.exit_code == 0, result.output


def test_the_testing_guide_example_is_the_file_and_passes_offline(tmp_path: Path) -> None:
    import re

    doc = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml\n(.*?)```", doc, flags=re.DOTALL)
    example = REPO / "docs" / "examples" / "testing"
    assert block == (example / "agent.yaml").read_text(encoding="utf-8")
    result = run("test", str(example), "--model", "test", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "3 cases, 3 passed" in result.output


def test_the_testing_guides_offline_run_output_is_real(tmp_path: Path) -> None:
    """The guide's `console` block, line by line in order (`...` stands for anything)."""
    import shutil

    doc = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```console\n(.*?)```", doc, flags=re.DOTALL)
    command, *expected = block.strip().splitlines()
    shutil.copytree(REPO / "docs" / "examples" / "testing", tmp_path / "docs/examples/testing")
    assert command == "$ holodeck test docs/examples/testing --model test"
    previous = Path.cwd()
    os.chdir(tmp_path)
    try:  # as wide as a terminal, so the header is not wrapped
        result = CliRunner(env={"COLUMNS": "120"}).invoke(cli, command.split()[2:])
    finally:
        os.chdir(previous)
    assert result.exit_code == 0, result.output
    lines = iter(result.output.splitlines())
    for want in expected:
        pattern = re.escape(want).replace(re.escape("..."), ".*")
        assert any(re.fullmatch(pattern, line.rstrip()) for line in lines), want


@pytest.mark.anyio
async def test_the_rate_limit_spaces_requests_across_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from holodeck.llm.rate_limit import RateLimiter

    clock = {"now": 1000.0}
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:  # the limiter's wait, on a virtual clock
        slept.append(seconds)
        clock["now"] += seconds

    import holodeck.llm.rate_limit as rate_limit

    monkeypatch.setattr(rate_limit.time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(rate_limit.asyncio, "sleep", fake_sleep)
    limiter = RateLimiter(per_minute=2)
    await asyncio.gather(*(limiter.acquire() for _ in range(5)))
    assert slept == [60.0, 60.0]  # 2 at once, then 2 a minute later, then the 5th
    assert len(limiter._starts) == 1


def test_tool_order_is_the_order_calls_were_made_not_the_order_they_ended(
    write: Write, tmp_path: Path
) -> None:
    root = write(
        {
            "agent.yaml": """
name: ordered
model: {provider: openai, name: gpt-4o}
instructions: {inline: Do both.}
tools:
  - {type: function, name: first, file: tools.py, function: first}
  - {type: function, name: second, file: tools.py, function: second}
test_cases:
  - name: both
    input: go
    expected_tools: [first, second]
    tool_order: in_order
""",
            "tools.py": """
import asyncio
second_done = asyncio.Event()

async def first() -> str:
    await second_done.wait()  # ends only after `second`
    return "1"

async def second() -> str:
    second_done.set()
    return "2"
""",
        }
    )
    result = run("test", str(root), "--model", "test", cwd=tmp_path)
    assert result.exit_code == 0, result.output


def test_timings_give_each_phase_its_wall_and_cpu_time(write: Write, tmp_path: Path) -> None:
    root = project(write, PASSING)
    result = run("test", str(root), "--model", "test", "--timings", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    line = result.stderr.split("timings:")[-1]
    phases = re.findall(r"(\w+) ([\d.]+) s \(([\d.]+) s CPU\)", line)
    assert [name for name, _, _ in phases] == ["import", "load", "run", "save", "report"]
    wall, cpu = {name: (float(w), float(c)) for name, w, c in phases}["load"]
    assert cpu > 0 and wall > 0  # reading and checking the definition takes time and CPU
