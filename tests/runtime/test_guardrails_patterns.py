"""A guardrail's regular expressions cannot stall a server: a pattern that backtracks
without end (`^(a+)+$`, `^(a|aa)+$`) runs off the event loop within a time bound, in an
agent's own file and in an uploaded image alike, and `/health` answers meanwhile; the
turn ends with the check's refusal (a pattern out of time counts as a match: a
guardrail fails closed). `holodeck validate` names such patterns at their line."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx

from cli_invoke import invoke
from conftest import Write
from holodeck.runtime._guardrails import GuardrailRunner
from holodeck.runtime._hosting import Hosting
from holodeck.runtime._options import RunOptions
from holodeck.spec.models.guardrails import Guardrails
from holodeck.spec.models.settings import ExecutionSettings
from server_harness import agent_dir, deploy_process, until
from test_controls_validate import HEAD, TOOLS, line_of
from test_server_operation import image_archive

REFUSAL = "Only letters, please."
SLOW = ["^(a+)+$", "^(a|aa)+$"]  # the second still backtracks in a linear-looking way
MESSAGE = "a" * 40 + "!"  # Python's `re` would need about 2**40 steps on the first
GUARDED = {"input": [{"name": "only-as", "block_patterns": SLOW, "message": REFUSAL}]}
UPLOAD = {
    "config.yaml": "spec_version: 1\nname: slow-upload\ninstructions: AGENTS.md\n"
    "llm:\n  model: openai/gpt-4o-mini\nguardrails:\n  input:\n"
    "    - name: only-as\n      block_patterns: ['^(a+)+$', '^(a|aa)+$']\n"
    f"      message: {REFUSAL}\n",
    "AGENTS.md": "You help.\n",
}
HEALTH_BOUND_S = 2.0


def _chat_timing_health(url: str, agent: str) -> tuple[dict[str, Any], list[float]]:
    """The answer to MESSAGE, with the time of each /health asked while the turn was
    under way."""
    answer: dict[str, Any] = {}

    def ask() -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            answer.update(client.post("/v1/chat", json={"message": MESSAGE, "agent": agent}).json())

    turn = threading.Thread(target=ask, daemon=True)
    turn.start()
    waits: list[float] = []
    deadline = time.monotonic() + 30
    with httpx.Client(base_url=url, timeout=HEALTH_BOUND_S) as client:
        while turn.is_alive():
            assert time.monotonic() < deadline, f"the turn of {agent} did not end"
            started = time.monotonic()
            try:
                status = client.get("/health").status_code
            except httpx.TimeoutException:
                raise AssertionError(
                    f"/health did not answer within {HEALTH_BOUND_S} s while {agent} checked "
                    "a message"
                ) from None
            assert status == 200
            waits.append(time.monotonic() - started)
    turn.join()
    return answer, waits


def test_a_backtracking_pattern_never_stalls_the_server(
    tmp_path: Path, isolated_home: Path
) -> None:
    root = agent_dir(tmp_path / "slow", name="slow", guardrails=GUARDED)
    env = {"HOLODECK_HOME": str(isolated_home)}
    with (
        deploy_process(str(root), "--model", "test", "--allow-uploads", env=env, cwd=tmp_path) as (
            _,
            url,
        ),
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        uploaded = client.post(
            "/v1/agents",
            content=image_archive(UPLOAD),
            headers={"Content-Type": "application/gzip"},
        )
        assert uploaded.status_code == 201, uploaded.text
        until(lambda: client.get("/ready").status_code == 200, what="the upload to be ready")
        results = {agent: _chat_timing_health(url, agent) for agent in ("slow", "slow-upload")}
        # a message the patterns decide at once goes through as before
        fine = client.post("/v1/chat", json={"message": "hello", "agent": "slow"}).json()

    for agent, (answer, waits) in results.items():
        assert answer["response"] == REFUSAL, (agent, answer)
        assert [g["guardrail"] for g in answer["guardrails"]] == ["only-as"]
        assert waits and max(waits) < HEALTH_BOUND_S, (agent, waits)
    assert fine["guardrails"] == [] and fine["response"]


# --- holodeck validate ------------------------------------------------------------------


def test_validate_warns_at_its_line_of_a_pattern_that_can_backtrack_without_end(
    write: Write,
) -> None:
    yaml = (
        HEAD + "guardrails:\n  input:\n    - block_patterns:\n"
        "        - '(?i)ignore (all )?previous instructions'\n"
        "        - '^(a+)+$'\n"
        "        - 'secret-\\d+'\n"
        "  output:\n    - block_patterns: ['(\\w+\\s?)*!', '(\\d+,)*x', '(a++)+']\n"
    )
    root = write({"agent.yaml": yaml, "tools.py": TOOLS})

    result = invoke("validate", "agent.yaml", cwd=root)
    strict = invoke("validate", "--strict", "agent.yaml", cwd=root)

    assert result.exit_code == 0, result.output
    assert f"agent.yaml:{line_of(yaml, '^(a+)+$')}" in result.output
    assert "guardrails.input[0].block_patterns[1]" in result.output
    assert "`^(a+)+$` can take time that doubles" in result.output
    assert "possessive (`a++`)" in result.output
    assert "guardrails.output[0].block_patterns[0]" in result.output
    # patterns that match each text one way only are not named
    for safe in (
        "input[0].block_patterns[0]",
        "input[0].block_patterns[2]",
        "output[0].block_patterns[1]",
        "output[0].block_patterns[2]",
    ):
        assert safe not in result.output, safe
    assert strict.exit_code == 2, strict.output
    assert "guardrails.input[0].block_patterns[1]" in strict.output


def test_a_redacting_check_whose_patterns_run_out_of_time_redacts_the_whole_text() -> None:
    guardrails = Guardrails.model_validate(
        {"output": [{"block_patterns": ["^(a|aa)+$"], "action": "redact"}]}
    )
    runner = GuardrailRunner(
        guardrails, None, RunOptions(), ExecutionSettings(), Hosting(), telemetry=None
    )
    started = time.monotonic()
    checked = asyncio.run(runner.check("output", MESSAGE, lambda hit: None))

    # a guardrail fails closed: nothing of a text it could not finish checking is shown
    assert (checked.text, checked.blocked) == ("[redacted]", False)
    assert time.monotonic() - started < 5
