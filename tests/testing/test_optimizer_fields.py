"""Each field of the `optimizer:` block changes what `holodeck test optimize` does (the
proof tests/spec/test_fields_are_used.py asks of every field), against the scripted server of
tests/testing/test_optimizer.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import test_optimizer
from conftest import Write
from scripted_servers import Reply, Step
from test_optimizer import (
    PHRASE,
    USELESS,
    Scripted,
    agent_yaml,
    events,
    run,
    saved_runs,
)

serve = test_optimizer.serve


def below(limit: float) -> Any:
    """An agent that answers well only at temperature <= `limit`."""

    def answer(body: dict[str, Any]) -> Step:
        good = body.get("temperature", 1.0) <= limit
        return Reply(text=f"Write to {PHRASE}." if good else "Hmm.")

    return answer


def never(body: dict[str, Any]) -> Step:
    return Reply(text="Hmm.")


def optimize(tmp_path: Path, root: Path, *args: str) -> list[dict[str, Any]]:
    result = run(tmp_path, str(root / "agent.yaml"), "--progress", "ndjson", *args)
    assert result.exit_code == 0, result.output
    return events(result)


def probes(got: list[dict[str, Any]]) -> list[Any]:
    return [
        next(iter(e["settings"].values()))
        for e in got
        if e["event"] == "candidate_started" and e["phase"] == "numeric"
    ]


@pytest.mark.parametrize(
    ("axis", "sampling", "first"),
    [
        ("{path: temperature, range: [0, 1]}", "", [1.0, 0.0]),  # whole range: its ends
        ("{path: temperature, range: [0, 1], step: 0.3}", "", [1.0, 0.6]),
        ("{path: temperature, type: categorical, range: [0.2, 0.9, 1.5]}", "", [1.5, 0.2]),
        ("{path: temperature, type: int, range: [0, 2]}", "", [2, 0]),
        ("{path: max_tokens, range: [100, 300]}", ", max_tokens: 200", [300, 100]),
    ],
)
def test_step_type_and_range_decide_the_moves(
    write: Write, tmp_path: Path, serve: Any, axis: str, sampling: str, first: list[Any]
) -> None:
    server = serve(never)
    optimizer = f"  axes:\n    numeric: [{axis}]\n"
    root = write({"agent.yaml": agent_yaml(server.url, optimizer, 0.9, sampling=sampling)})

    got = optimize(tmp_path, root, "--budget-candidates", "3")

    assert probes(got) == first
    assert [type(v) for v in probes(got)] == [type(v) for v in first]
    # each candidate's value reached the model (as OpenAI's max_completion_tokens)
    keys = ("max_tokens", "max_completion_tokens", "temperature")
    sent = {r.body.get(k) for r in server.requests for k in keys}
    assert set(first) <= sent


def test_max_chars_refuses_a_long_proposal_without_a_run(
    write: Write, tmp_path: Path, serve: Any
) -> None:
    server = serve(Scripted([lambda _: "x" * 50]))
    optimizer = "  axes: {textual: [{path: instructions, max_chars: 40}]}\n"
    optimizer += "  textual_phase: {max_trials: 2, patience: 2}\n"
    root = write({"agent.yaml": agent_yaml(server.url, optimizer)})

    got = optimize(tmp_path, root)

    refused = [e for e in got if e["event"] == "rejected"]
    assert [e["candidate"] for e in refused] == [None, None]
    assert "50 characters, over max_chars 40" in refused[0]["reason"]
    assert got[-1]["candidates"] == 1  # the original only


@pytest.mark.parametrize(
    ("score", "improves"),
    [
        ("objective: pass_rate", False),  # the regex metric fails every case
        ("objective: contains", True),
        ("loss: {contains: 2.0, regex: 1.0}", True),
    ],
)
def test_objective_and_loss_choose_what_is_maximised(
    write: Write, tmp_path: Path, serve: Any, score: str, improves: bool
) -> None:
    server = serve(below(0.3))
    metrics = "[{metric: contains}, {metric: regex, pattern: NEVER-SAID}]"
    optimizer = f"  axes:\n    numeric: [{{path: temperature, range: [0, 1]}}]\n  {score}\n"
    root = write({"agent.yaml": agent_yaml(server.url, optimizer, 0.9, metrics=metrics)})

    done = optimize(tmp_path, root, "--budget-candidates", "4")[-1]

    assert (done["after"]["train"] > done["before"]["train"]) is improves
    assert (root / "agent.optimized.yaml").exists() is improves
    if score.startswith("loss"):
        assert done["after"]["train"] == pytest.approx(2 / 3)  # contains 1, regex 0


def test_an_objective_no_case_reports_is_refused(write: Write, tmp_path: Path, serve: Any) -> None:
    server = serve(never)
    optimizer = "  axes: {textual: [{path: instructions}]}\n  objective: contain\n"
    root = write({"agent.yaml": agent_yaml(server.url, optimizer)})
    result = run(tmp_path, str(root / "agent.yaml"))
    assert result.exit_code == 2
    assert "optimizer.objective: no case reported a metric `contain`" in result.output
    assert "contains" in result.output  # the metrics it could be


def test_the_proposer_block_chooses_the_proposers_model(
    write: Write, tmp_path: Path, serve: Any
) -> None:
    agent_server, proposer_server = (
        serve(Scripted([lambda _: USELESS])),
        serve(Scripted([lambda _: USELESS])),
    )
    optimizer = (
        "  axes: {textual: [{path: instructions}]}\n"
        "  textual_phase: {max_trials: 1, patience: 1}\n"
        f"  proposer: {{provider: openai, name: gpt-4o, endpoint: {proposer_server.url}, "
        "api_key: sk-test}\n"
    )
    root = write({"agent.yaml": agent_yaml(agent_server.url, optimizer)})

    got = optimize(tmp_path, root)

    proposal = next(e for e in got if e["event"] == "proposal")
    assert proposal["model"] == "openai/gpt-4o"
    assert [r.body["model"] for r in proposer_server.requests] == ["gpt-4o"]
    assert all("tools" not in r.body for r in agent_server.requests)


def test_holdout_and_seed_decide_the_split(write: Write, tmp_path: Path, serve: Any) -> None:
    server = serve(never)

    def split(holdout: float, seed: int) -> tuple[list[str], list[str]]:
        optimizer = "  axes: {textual: [{path: instructions}]}\n"
        optimizer += f"  holdout: {holdout}\n  seed: {seed}\n"
        root = write({"agent.yaml": agent_yaml(server.url, optimizer)})
        start = optimize(tmp_path, root, "--budget-candidates", "1")[0]
        return start["train"], start["holdout"]

    assert [len(part) for part in split(0.5, 1)] == [3, 3]
    assert [len(part) for part in split(0.0, 1)] == [6, 0]
    assert split(0.5, 1) == split(0.5, 1)  # the same seed, the same split
    assert len({tuple(split(0.5, seed)[1]) for seed in (1, 2, 3, 4)}) > 1


def test_max_cycles_ends_the_search(write: Write, tmp_path: Path, serve: Any) -> None:
    server = serve(below(0.3))
    optimizer = "  axes:\n    numeric: [{path: temperature, range: [0, 1]}]\n"
    one = write({"agent.yaml": agent_yaml(server.url, optimizer + "  max_cycles: 1\n", 0.9)})
    three = write({"agent.yaml": agent_yaml(server.url, optimizer, 0.9)})

    got_one, got_three = optimize(tmp_path, one), optimize(tmp_path, three)

    assert [e["event"] for e in got_one].count("cycle") == 1
    assert got_one[-1]["stopped"] == "max_cycles"
    assert [e["event"] for e in got_three].count("cycle") == 2  # the second changed nothing
    assert got_three[-1]["stopped"] == "converged"


@pytest.mark.parametrize(
    ("phase", "limits", "candidates"),
    [
        ("numeric_phase", "{max_trials: 2, patience: 9}", 3),
        ("numeric_phase", "{max_trials: 9, patience: 1}", 2),
        ("textual_phase", "{max_trials: 2, patience: 9}", 3),
        ("textual_phase", "{max_trials: 9, patience: 1}", 2),
    ],
)
def test_phase_limits_end_a_phase(
    write: Write, tmp_path: Path, serve: Any, phase: str, limits: str, candidates: int
) -> None:
    tries = iter(range(100))
    server = serve(Scripted([lambda _: f"{USELESS} ({next(tries)})"]))
    axis = (
        "numeric: [{path: temperature, range: [0, 1]}]"
        if phase == "numeric_phase"
        else "textual: [{path: instructions}]"
    )
    optimizer = f"  axes: {{{axis}}}\n  max_cycles: 1\n  {phase}: {limits}\n"
    root = write({"agent.yaml": agent_yaml(server.url, optimizer, 0.9)})

    got = optimize(tmp_path, root, "--budget-candidates", "20")

    assert got[-1]["candidates"] == candidates
    assert len(saved_runs(tmp_path)) == candidates


def test_min_delta_is_the_least_improvement_kept(write: Write, tmp_path: Path, serve: Any) -> None:
    server = serve(below(0.3))
    optimizer = "  axes:\n    numeric: [{path: temperature, range: [0, 1]}]\n  min_delta: 1.0\n"
    root = write({"agent.yaml": agent_yaml(server.url, optimizer, 0.9)})

    got = optimize(tmp_path, root, "--budget-candidates", "4")

    scores = [e["scores"]["train"] for e in got if e["event"] == "candidate_finished"]
    assert 1.0 in scores  # temperature 0 passed every case: from 0 to 1 is not more than 1
    assert not any(e["event"] == "accepted" for e in got)
    assert not (root / "agent.optimized.yaml").exists()


def test_the_cost_budget_stops_the_search(write: Write, tmp_path: Path, serve: Any) -> None:
    server = serve(never)  # answers as gpt-4o-mini, whose price pydantic-ai knows
    optimizer = "  axes: {textual: [{path: instructions}]}\n  budget: {cost: 0.00001}\n"
    root = write({"agent.yaml": agent_yaml(server.url, optimizer)})

    got = optimize(tmp_path, root)

    done = got[-1]
    assert done["stopped"] == "cost budget" and done["candidates"] == 1
    assert done["cost"] is not None and done["cost"] > 0
    budget = next(e for e in got if e["event"] == "budget_reached")
    assert budget["budget"] == "cost"


def test_a_proposer_answer_that_never_fits_is_a_refused_proposal(
    write: Write, tmp_path: Path, serve: Any
) -> None:
    def answer(body: dict[str, Any]) -> Step:
        if test_optimizer.is_proposer(body):
            return Reply(text="I would rather chat.")  # never the tool call asked for
        return never(body)

    server = serve(answer)
    optimizer = "  axes: {textual: [{path: instructions}]}\n"
    optimizer += "  textual_phase: {max_trials: 2, patience: 2}\n"
    root = write({"agent.yaml": agent_yaml(server.url, optimizer)})

    result = run(tmp_path, str(root / "agent.yaml"), "--progress", "ndjson")
    got = events(result)

    refused = [e for e in got if e["event"] == "rejected"]
    assert len(refused) == 2 and all("no valid answer" in e["reason"] for e in refused)
    # no proposal was ever made: that is not convergence, and the exit code says so
    assert got[-1]["candidates"] == 1 and got[-1]["stopped"] == "no proposal"
    assert result.exit_code == 3, result.output


def test_holdout_and_seed_options_override_the_block(
    write: Write, tmp_path: Path, serve: Any
) -> None:
    server = serve(never)
    optimizer = "  axes: {textual: [{path: instructions}]}\n  holdout: 0.2\n  seed: 1\n"
    root = write({"agent.yaml": agent_yaml(server.url, optimizer)})
    block = optimize(tmp_path, root, "--budget-candidates", "1")[0]
    given = optimize(tmp_path, root, "--budget-candidates", "1", "--holdout", "0.5", "--seed", "1")[
        0
    ]
    assert len(block["holdout"]) == 1 and len(given["holdout"]) == 3
