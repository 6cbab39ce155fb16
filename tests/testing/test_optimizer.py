"""`holodeck test optimize` end to end against a scripted model server over real HTTP
whose answers depend on the request: the agent's on its instructions and temperature,
the proposer's on how often it was asked."""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from conftest import Write
from holodeck import load_agent
from holodeck.cli.main import cli
from scripted_servers import Call, OpenAIServer, Reply, Step, unauthorized

PHRASE = "support@acme.test"
QUESTIONS = (
    "Where is my parcel?",
    "Can I return shoes?",
    "My invoice is wrong.",
    "How do I reset my password?",
    "Do you ship abroad?",
    "I was charged twice.",
)
USELESS = "You help customers.\nBe brief."
GOOD = f"You help customers.\nAlways tell customers to write to {PHRASE}."


class PromptServer(OpenAIServer):
    """Answers each request from what it says (`answer(body)`), not from a queue."""

    def __init__(self, answer: Callable[[dict[str, Any]], Step]) -> None:
        super().__init__()
        self.answer = answer
        self._body = threading.local()  # one request per handler thread

    def _handle(self, handler: Any) -> None:
        raw = handler.rfile.read(int(handler.headers.get("content-length") or 0))
        handler.rfile = io.BytesIO(raw)
        self._body.value = json.loads(raw) if raw else {}
        super()._handle(handler)

    def _next(self) -> Step:
        return self.answer(self._body.value)


def system_and_user(body: dict[str, Any]) -> tuple[str, str]:
    messages = body.get("messages", [])
    system = "\n".join(str(m["content"]) for m in messages if m["role"] in ("system", "developer"))
    user = [str(m["content"]) for m in messages if m["role"] == "user"]
    return system, user[-1] if user else ""


def is_proposer(body: dict[str, Any]) -> bool:
    return any(t["function"]["name"] == "propose_instructions" for t in body.get("tools", []))


class Scripted:
    """The agent answers with PHRASE when its instructions name it, or when they memorise
    the question asked (`When asked "<question>"`); the proposer proposes `proposals` in
    turn: the tried-and-useless first, then the good one."""

    def __init__(self, proposals: list[Callable[[str], str]]) -> None:
        self.proposals = proposals
        self.proposed = 0

    def __call__(self, body: dict[str, Any]) -> Step:
        system, user = system_and_user(body)
        if is_proposer(body):
            make = self.proposals[min(self.proposed, len(self.proposals) - 1)]
            self.proposed += 1
            return Reply(calls=(Call("propose_instructions", {"instructions": make(user)}),))
        if PHRASE in system or f'When asked "{user}"' in system:
            return Reply(text=f"Please write to {PHRASE}.")
        return Reply(text="I am not sure.")


def memorising(prompt: str) -> str:
    """An edit that answers exactly the failing questions the proposer was shown."""
    shown = [q for q in QUESTIONS if q in prompt]
    return "You help customers.\n" + "\n".join(
        f'When asked "{q}", say where to write.' for q in shown
    )


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[dict[str, Any]], Step]], PromptServer]]:
    started: list[PromptServer] = []

    def start(answer: Callable[[dict[str, Any]], Step]) -> PromptServer:
        server = PromptServer(answer)
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def agent_yaml(
    url: str,
    optimizer: str,
    temperature: float | None = None,
    *,
    sampling: str = "",
    metrics: str = "[{metric: contains}]",
) -> str:
    if temperature is not None:
        sampling += f", temperature: {temperature}"
    cases = "".join(
        f"  - {{name: q{i}, input: {json.dumps(q)}, ground_truth: {PHRASE}}}\n"
        for i, q in enumerate(QUESTIONS)
    )
    return (
        "name: helpdesk\n"
        "# the model is a scripted server\n"
        f"model: {{provider: openai, name: gpt-4o-mini, endpoint: {url}, api_key: sk-test"
        f"{sampling}}}\n"
        "instructions:\n  inline: You help customers.  # keep this comment\n"
        f"evaluations:\n  metrics: {metrics}\n"
        "execution: {parallel_test_cases: 2}\n"
        f"test_cases:\n{cases}"
        f"optimizer:\n{optimizer}"
    )


def run(cwd: Path, *args: str) -> Result:
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, ["test", "optimize", *args])
    finally:
        os.chdir(previous)


def events(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def saved_runs(cwd: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((cwd / ".holodeck" / "runs").glob("*.json"))]


TEXTUAL = """\
  axes:
    textual: [{path: instructions}]
  holdout: 0.34
  seed: 7
"""


def test_the_search_keeps_the_prompt_that_helps_unseen_cases(
    write: Write, tmp_path: Path, serve: Any
) -> None:
    script = Scripted([memorising, lambda _: GOOD])
    server = serve(script)
    root = write({"agent.yaml": agent_yaml(server.url, TEXTUAL)})
    original = (root / "agent.yaml").read_bytes()

    result = run(
        tmp_path,
        str(root / "agent.yaml"),
        "--progress",
        "ndjson",
        "--budget-candidates",
        "6",
        "--budget-calls",
        "60",
    )

    assert result.exit_code == 0, result.output
    got = events(result)  # every stdout line is one JSON event
    kinds = [e["event"] for e in got]
    assert kinds[0] == "start" and kinds[-1] == "done"
    start, done = got[0], got[-1]
    assert len(start["holdout"]) == 2 and len(start["train"]) == 4
    finished = {e["candidate"]: e for e in got if e["event"] == "candidate_finished"}
    assert finished[0]["scores"] == {"train": 0.0, "holdout": 0.0}
    # the memorising edit passes every train case but no held-out one: the gate refuses it
    assert finished[1]["scores"] == {"train": 1.0, "holdout": 0.0}
    rejected = next(e for e in got if e["event"] == "rejected" and e["candidate"] == 1)
    assert "holdout 0.000 -> 0.000 did not improve" in rejected["reason"]
    # the proposer's second try was told the first was not kept, and helps everywhere
    proposals = [e for e in got if e["event"] == "proposal"]
    shown = " ".join(QUESTIONS[int(name[1:])] for name in start["train"])
    assert [p["instructions"] for p in proposals] == [memorising(shown), GOOD]
    assert sorted(proposals[0]["failing"]) == sorted(start["train"])
    # what the proposer read: each failing case's input, answer, expected value and checks
    asked = next(r.body for r in server.requests if is_proposer(r.body))
    _, prompt = system_and_user(asked)
    train_question = QUESTIONS[int(start["train"][0][1:])]
    assert f"input: {train_question}" in prompt and "answer: I am not sure." in prompt
    assert f"expected: {PHRASE}" in prompt and "metric contains: fail" in prompt
    assert "the output does not contain the ground truth" in prompt  # the metric's reason
    held_question = QUESTIONS[int(start["holdout"][0][1:])]
    assert held_question not in prompt  # held-out cases are never shown
    assert finished[2]["scores"] == {"train": 1.0, "holdout": 1.0}
    assert any(e["event"] == "accepted" and e["candidate"] == 2 for e in got)
    assert done["before"] == {"train": 0.0, "holdout": 0.0}
    assert done["after"] == {"train": 1.0, "holdout": 1.0}
    assert done["stopped"] == "converged" and done["candidates"] == 3
    assert done["calls"] <= 60 and done["calls"] == len(server.requests)

    # the original is untouched; the result is beside it, comments kept
    assert (root / "agent.yaml").read_bytes() == original
    optimized = root / "agent.optimized.yaml"
    text = optimized.read_text()
    assert "# the model is a scripted server" in text and PHRASE in text
    assert load_agent(optimized).instructions.strip() == GOOD  # type: ignore[union-attr]
    assert f"+    Always tell customers to write to {PHRASE}." in result.stderr  # the diff

    # every candidate is a saved run, tagged with the search and its number
    runs = saved_runs(tmp_path)
    assert len(runs) == 3
    assert {t for r in runs for t in r["tags"] if t.startswith("optimize:")} == {
        f"optimize:{start['search_id']}"
    }
    assert sorted(t for r in runs for t in r["tags"] if t.startswith("candidate:")) == [
        "candidate:0",
        "candidate:1",
        "candidate:2",
    ]


@pytest.mark.parametrize(
    ("budget", "limit", "stopped"),
    [("--budget-candidates", 3, "candidates budget"), ("--budget-calls", 16, "calls budget")],
)
def test_a_budget_stops_the_search(
    write: Write, tmp_path: Path, serve: Any, budget: str, limit: int, stopped: str
) -> None:
    tries = iter(range(100))
    server = serve(Scripted([lambda _: f"{USELESS} (variant {next(tries)})"]))
    optimizer = TEXTUAL + "  textual_phase: {max_trials: 20, patience: 20}\n"
    root = write({"agent.yaml": agent_yaml(server.url, optimizer)})

    result = run(tmp_path, str(root / "agent.yaml"), "--progress", "ndjson", budget, str(limit))

    assert result.exit_code == 0, result.output
    got = events(result)
    done = got[-1]
    assert done["stopped"] == stopped
    assert any(e["event"] == "budget_reached" for e in got)
    if budget == "--budget-candidates":
        assert done["candidates"] == limit
    else:
        assert done["calls"] <= limit and len(server.requests) == done["calls"]
    assert len(saved_runs(tmp_path)) == done["candidates"]
    assert not (root / "agent.optimized.yaml").exists()  # nothing beat the original
    assert "nothing written" in result.stderr


def test_coordinate_descent_finds_a_temperature_that_passes(
    write: Write, tmp_path: Path, serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def answer(body: dict[str, Any]) -> Step:
        correct = body.get("temperature", 1.0) <= 0.3
        return Reply(text=f"Write to {PHRASE}." if correct else "Hmm.")

    server = serve(answer)
    optimizer = "  axes:\n    numeric: [{path: temperature, range: [0.0, 1.0]}]\n"
    text = agent_yaml(server.url, optimizer, temperature=0.9)
    monkeypatch.setenv("HELPDESK_KEY", "sk-secret-value")
    root = write({"agent.yaml": text.replace("api_key: sk-test", "api_key: '${HELPDESK_KEY}'")})

    result = run(tmp_path, str(root / "agent.yaml"), "--budget-candidates", "8")

    assert result.exit_code == 0, result.output
    assert {r.body["temperature"] for r in server.requests[:6]} == {0.9}  # the original
    best = load_agent(root / "agent.optimized.yaml").model
    assert best is not None and best.temperature is not None and best.temperature <= 0.3
    assert "temperature: 0.9" in (root / "agent.yaml").read_text()
    written = (root / "agent.optimized.yaml").read_text()
    assert "${HELPDESK_KEY}" in written and "sk-secret-value" not in written
    assert "-model: {provider: openai" in result.stdout and "temperature: 0.9}" in result.stdout
    assert "before" in result.stdout and "after" in result.stdout


@pytest.mark.parametrize(
    ("optimizer", "marker", "says"),
    [
        (
            "  axes:\n    numeric:\n      - {path: temperature, range: [0.8, 0.2]}\n",
            "{path: temperature",
            "has min 0.8 > max 0.2",
        ),
        (
            "  axes:\n    numeric:\n      - {path: model.temprature, range: [0, 1]}\n",
            "{path: model.temprature",
            "unknown setting `model.temprature` (did you mean `model.temperature`?)",
        ),
        (
            "  axes: {textual: [{path: instructions}]}\n  budget:\n    calls: 0\n",
            "calls: 0",
            "optimizer.budget.calls: must be greater than 0",
        ),
    ],
)
def test_bad_optimizer_blocks_are_errors_at_their_line(
    write: Write, tmp_path: Path, optimizer: str, marker: str, says: str
) -> None:
    root = write({"agent.yaml": agent_yaml("http://127.0.0.1:9/v1", optimizer)})
    lines = (root / "agent.yaml").read_text().splitlines()
    line = next(n for n, text in enumerate(lines, start=1) if marker in text)

    result = run(tmp_path, str(root / "agent.yaml"))

    assert result.exit_code == 2
    assert f"agent.yaml:{line}:" in result.output and says in result.output
    assert "Traceback" not in result.output


def test_no_optimizer_block_or_a_zero_budget_option_is_refused(
    write: Write, tmp_path: Path
) -> None:
    root = write(
        {"agent.yaml": agent_yaml("http://127.0.0.1:9/v1", TEXTUAL).split("optimizer:")[0]}
    )
    result = run(tmp_path, str(root / "agent.yaml"))
    assert result.exit_code == 2 and "no `optimizer:` block" in result.output
    result = run(tmp_path, str(root / "agent.yaml"), "--budget-candidates", "0")
    assert result.exit_code == 2 and "--budget-candidates" in result.output


def test_a_model_that_refuses_every_case_is_an_execution_error(
    write: Write, tmp_path: Path, serve: Any
) -> None:
    server = serve(lambda body: unauthorized())
    root = write({"agent.yaml": agent_yaml(server.url, TEXTUAL)})
    result = run(tmp_path, str(root / "agent.yaml"))
    assert result.exit_code == 3
    assert "no case of the original agent could run" in result.output
    assert "key was refused" in result.output
    assert "Traceback" not in result.output
    assert not (root / "agent.optimized.yaml").exists()


@pytest.mark.parametrize("proposer", ["talks", "refuses"])
def test_a_proposer_that_never_proposes_is_an_error_not_convergence(
    write: Write, tmp_path: Path, serve: Any, proposer: str
) -> None:
    """A proposer that answers in prose instead of its tool (every try a miss), or whose
    key is refused, never searched the instructions: the search says so and exits 3."""

    def answer(body: dict[str, Any]) -> Step:
        if is_proposer(body):
            return Reply(text="I would rather not.") if proposer == "talks" else unauthorized()
        return Reply(text="I am not sure.")

    server = serve(answer)
    root = write({"agent.yaml": agent_yaml(server.url, TEXTUAL)})

    result = run(tmp_path, str(root / "agent.yaml"), "--progress", "ndjson")

    assert result.exit_code == 3, result.output
    done = events(result)[-1]
    assert done["event"] == "done" and done["stopped"] == "no proposal"
    tries = "3 tries" if proposer == "talks" else "1 try"
    assert f"the proposer (openai/gpt-4o-mini) gave no proposal in {tries}" in result.stderr
    assert "the instructions were not searched" in result.stderr
    assert "optimizer.proposer" in result.stderr  # the hint
    assert "Traceback" not in result.output
    assert not (root / "agent.optimized.yaml").exists()
