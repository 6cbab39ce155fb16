"""Simulated users over real HTTP: a scripted model plays the agent, another the user
(answering through the `user_turn` tool), a third the judge; `holodeck test` runs them."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from conftest import Write
from holodeck.cli.main import cli
from holodeck.llm.offline_script import USER_TOOL
from holodeck.testing.metrics.judge import JUDGE_TOOL
from holodeck.testing.reports import render_report
from holodeck.testing.results import TestRun
from scripted_servers import Call, OpenAIServer, Reply, text, tool_calls
from yaml_dump import dump

TOOLS = """
def check_order_status(order_id: str) -> dict:
    return {"order": order_id, "status": "delivered two days late"}

def issue_refund(order_id: str) -> str:
    return f"refunded order {order_id}"
"""
PERSONA = "An impatient customer who gives the order number only when asked."
GOAL = "Get a refund for order 42, which arrived late."


@pytest.fixture
def agent_server() -> Iterator[OpenAIServer]:
    yield from _running()


@pytest.fixture
def user_server() -> Iterator[OpenAIServer]:
    yield from _running()


@pytest.fixture
def judge_server() -> Iterator[OpenAIServer]:
    yield from _running()


def _running() -> Iterator[OpenAIServer]:
    server = OpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


def model(server: OpenAIServer, name: str) -> dict[str, Any]:
    return {"provider": "openai", "name": name, "endpoint": server.url, "api_key": "sk-test"}


def project(
    write: Write,
    agent: OpenAIServer,
    case: dict[str, Any],
    *,
    user: OpenAIServer | None = None,
    judge: OpenAIServer | None = None,
) -> Path:
    # `metrics` needs one: a disabled one, so only the case's own metrics run
    evaluations: dict[str, Any] = {"metrics": [{"metric": "bleu", "enabled": False}]}
    if user is not None:
        evaluations["user_model"] = {**model(user, "user-model"), "temperature": 0.9}
    if judge is not None:
        evaluations["model"] = model(judge, "judge-model")
    data = {
        "name": "shop",
        "model": model(agent, "agent-model"),
        "instructions": {"inline": "You are Sam, the shop's refund assistant."},
        "tools": [
            {"type": "function", "name": n, "file": "tools.py", "function": n}
            for n in ("check_order_status", "issue_refund")
        ],
        "evaluations": evaluations,
        "test_cases": [{"name": "late order", **case}],
    }
    return write({"agent.yaml": dump(data), "tools.py": TOOLS})


def simulate(**extra: Any) -> dict[str, Any]:
    return {"simulate": {"persona": PERSONA, "goal": GOAL, **extra}}


def say(message: str) -> Reply:
    return tool_calls(Call(USER_TOOL, {"action": "message", "message": message}))


def stop(reason: str, explanation: str) -> Reply:
    return tool_calls(
        Call(USER_TOOL, {"action": "stop", "reason": reason, "explanation": explanation})
    )


def verdict(score: float, reason: str) -> Reply:
    return tool_calls(Call(JUDGE_TOOL, {"reason": reason, "score": score}))


def refund_conversation(agent: OpenAIServer) -> None:
    """The agent's side: look the order up (turn 1), refund it (turn 2)."""
    agent.script(
        tool_calls(Call("check_order_status", {"order_id": "42"})),
        text("Order 42 arrived late. Shall I refund it?"),
        tool_calls(Call("issue_refund", {"order_id": "42"})),
        text("Done: order 42 is refunded."),
    )


def run(root: Path, *args: str) -> tuple[Result, dict[str, Any]]:
    """`holodeck test` in the agent's directory; the result and its JSON report."""
    previous = Path.cwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(cli, ["test", ".", "-o", "report.json", *args])
    finally:
        os.chdir(previous)
    report = root / "report.json"
    return result, json.loads(report.read_text()) if report.is_file() else {}


def flat(output: str) -> str:
    """Console output with its line wrapping undone."""
    return " ".join(output.split())


def first_run(report: dict[str, Any]) -> dict[str, Any]:
    (case,) = report["cases"]
    run: dict[str, Any] = case["runs"][0]
    return run


def said(request_body: dict[str, Any]) -> str:
    """Everything a model request carried as text: system, user and tool messages."""
    return json.dumps(request_body["messages"])


# --- the loop -----------------------------------------------------------------------


def test_the_user_talks_until_it_says_its_goal_is_met(
    write: Write, agent_server: OpenAIServer, user_server: OpenAIServer
) -> None:
    refund_conversation(agent_server)
    user_server.script(say("It is order 42, yes refund it"), stop("goal_met", "Refunded."))
    root = project(
        write,
        agent_server,
        {**simulate(first_message="My order was late.", plan=["Order 42"])},
        user=user_server,
    )

    result, report = run(root, "-v")

    assert result.exit_code == 0, result.output
    run_ = first_run(report)
    assert run_["simulation"] == {
        "stopped": "goal_met",
        "explanation": "Refunded.",
        "turns": 2,
        "persona": PERSONA,
        "goal": GOAL,
        "input_tokens": 22,  # two scripted replies of 11 in / 7 out each
        "output_tokens": 14,
    }
    assert [t["input"] for t in run_["turns"]] == [
        "My order was late.",
        "It is order 42, yes refund it",
    ]
    assert [t["output"] for t in run_["turns"]] == [
        "Order 42 arrived late. Shall I refund it?",
        "Done: order 42 is refunded.",
    ]
    assert [[c["name"] for c in t["tool_calls"]] for t in run_["turns"]] == [
        ["check_order_status"],
        ["issue_refund"],
    ]
    # the user model: asked after each answer, with the persona, goal and plan as its
    # instructions, the conversation so far (no tool calls) and its own temperature
    first, second = (r.body for r in user_server.requests)
    assert first["model"] == "user-model" and first["temperature"] == 0.9
    assert [t["function"]["name"] for t in first["tools"]] == [USER_TOOL]
    for needed in (PERSONA, GOAL, "Order 42"):
        assert needed in said(first)
    assert "Agent: Order 42 arrived late. Shall I refund it?" in said(first)
    assert "Agent: Done: order 42 is refunded." in said(second)
    assert "delivered two days late" not in said(second)  # the user sees no tool results
    # the agent: the user's messages as its conversation, never the persona, goal or plan
    assert len(agent_server.requests) == 4
    last = said(agent_server.requests[-1].body)
    assert "My order was late." in last and "It is order 42, yes refund it" in last
    for hidden in (PERSONA, GOAL, "Order 42\\n", USER_TOOL):
        assert hidden not in last
    # the console transcript shows both sides, the tools and how it ended
    out = flat(result.output)
    assert "user: My order was late." in out and "agent: Done: order 42 is refunded." in out
    assert "tool issue_refund" in out
    assert "Simulation: ✓ the user's goal was met after 2 turns (Refunded.)" in out
    assert "user model tokens: 22 in / 14 out" in out


def test_a_user_who_gives_up_fails_the_case_and_says_why(
    write: Write, agent_server: OpenAIServer, user_server: OpenAIServer
) -> None:
    agent_server.script(text("I cannot help with orders."))
    user_server.script(stop("gave_up", "The agent refuses to look at orders."))
    root = project(
        write, agent_server, simulate(first_message="My order was late."), user=user_server
    )

    result, report = run(root)

    assert result.exit_code == 1
    run_ = first_run(report)
    assert run_["status"] == "fail"
    assert run_["simulation"]["stopped"] == "gave_up"
    assert run_["simulation"]["turns"] == 1
    assert (
        "Simulation: ✗ the user gave up after 1 turn (The agent refuses to look at orders.)"
        in flat(result.output)
    )


def test_the_conversation_ends_at_max_turns_and_the_judge_model_plays_the_user_by_default(
    write: Write, agent_server: OpenAIServer, judge_server: OpenAIServer
) -> None:
    agent_server.script(text("Which order?"), text("Which order, again?"))
    judge_server.script(say("Hello, my order was late"), say("Order 42"), say("Order 42!!"))
    root = project(write, agent_server, simulate(max_turns=2), judge=judge_server)

    result, report = run(root)

    assert result.exit_code == 1
    run_ = first_run(report)
    assert run_["simulation"]["stopped"] == "max_turns"
    assert [t["input"] for t in run_["turns"]] == ["Hello, my order was late", "Order 42"]
    # asked for the opening, after each answer; its last message was never sent
    assert len(judge_server.requests) == 3 and len(agent_server.requests) == 2
    assert judge_server.requests[0].body["model"] == "judge-model"
    assert "The agent may answer 1 more time." in said(judge_server.requests[1].body)
    assert "stopped at max_turns after 2 turns" in flat(result.output)


def test_a_user_answer_that_does_not_fit_goes_back_to_the_user_model(
    write: Write, agent_server: OpenAIServer, user_server: OpenAIServer
) -> None:
    agent_server.script(text("Refunded."))
    user_server.script(
        tool_calls(Call(USER_TOOL, {"action": "stop"})),  # no reason: sent back
        stop("goal_met", "ok"),
    )
    root = project(write, agent_server, simulate(first_message="Refund 42"), user=user_server)

    result, report = run(root)

    assert result.exit_code == 0, result.output
    assert first_run(report)["simulation"]["stopped"] == "goal_met"
    assert "needs a `reason`" in said(user_server.requests[1].body)


# --- tool expectations over the whole conversation ------------------------------------


@pytest.mark.parametrize(
    ("expected", "order", "passes", "problem"),
    [
        (["check_order_status", "issue_refund"], "in_order", True, None),
        (["issue_refund", "check_order_status"], "in_order", False, "out of order"),
        ([{"name": "issue_refund", "args": {"order_id": "42"}, "count": 1}], "any", True, None),
        ([{"name": "issue_refund", "args": {"order_id": "7"}}], "any", False, "wrong argument"),
        (["check_order_status"], "exact", False, "unexpected: issue_refund"),
    ],
)
def test_expected_tools_apply_across_every_turn(
    write: Write,
    agent_server: OpenAIServer,
    user_server: OpenAIServer,
    expected: list[Any],
    order: str,
    passes: bool,
    problem: str | None,
) -> None:
    refund_conversation(agent_server)
    user_server.script(say("Yes, order 42"), stop("goal_met", "Refunded."))
    case = {**simulate(first_message="Late order."), "expected_tools": expected}
    root = project(write, agent_server, {**case, "tool_order": order}, user=user_server)

    result, report = run(root)

    check = first_run(report)["tool_check"]
    assert check["passed"] is passes
    assert result.exit_code == (0 if passes else 1), result.output
    if problem is not None:
        assert problem in flat(result.output)


# --- conversation metrics ----------------------------------------------------------------


def test_a_conversation_judges_reason_reaches_every_report(
    write: Write, agent_server: OpenAIServer, user_server: OpenAIServer, judge_server: OpenAIServer
) -> None:
    refund_conversation(agent_server)
    user_server.script(say("Order 42"), stop("goal_met", "Refunded."))
    judge_server.script(verdict(0.4, "It refunded only after being asked twice."))
    case = {
        **simulate(first_message="My order was late."),
        "evaluations": [{"metric": "goal_completion", "threshold": 0.8}],
    }
    root = project(write, agent_server, case, user=user_server, judge=judge_server)

    result, report = run(root, "-v")

    assert result.exit_code == 1
    (metric,) = first_run(report)["metrics"]
    assert metric["name"] == "goal_completion" and metric["kind"] == "conversation"
    assert (metric["score"], metric["threshold"], metric["status"]) == (0.4, 0.8, "fail")
    reason = "It refunded only after being asked twice."
    assert metric["reason"] == reason
    assert f"reason: {reason}" in flat(result.output)
    # the judge saw the goal and the whole conversation, tool calls included
    (judged,) = judge_server.requests
    shown = said(judged.body)
    assert GOAL in shown and "[turn 2]" in shown
    assert 'agent called issue_refund({\\"order_id\\": \\"42\\"}) -> refunded order 42' in shown
    saved = TestRun.model_validate(report)
    for fmt in ("markdown", "html", "junit"):
        page = render_report(saved, fmt)
        assert "asked twice" in page, fmt
        assert "goal was met after 2 turns" in page, fmt
    assert "[turn 2]" in render_report(saved, "markdown")  # the judge prompt, for -v readers


def test_turn_relevancy_reports_the_mean_and_the_worst_turn(
    write: Write, agent_server: OpenAIServer, user_server: OpenAIServer, judge_server: OpenAIServer
) -> None:
    refund_conversation(agent_server)
    user_server.script(say("Order 42"), stop("goal_met", "Refunded."))
    judge_server.script(
        verdict(0.9, "Asks for what it needs."), verdict(0.3, "Refunds without confirming.")
    )
    case = {
        **simulate(first_message="My order was late."),
        "evaluations": [{"metric": "turn_relevancy", "threshold": 0.7}],
    }
    root = project(write, agent_server, case, user=user_server, judge=judge_server)

    result, report = run(root)

    (metric,) = first_run(report)["metrics"]
    assert metric["score"] == pytest.approx(0.6)
    assert metric["status"] == "fail" and result.exit_code == 1
    assert metric["reason"] == (
        "mean of 2 turns (1: 0.90, 2: 0.30); worst: turn 2 (0.30): Refunds without confirming."
    )
    first, second = (said(r.body) for r in judge_server.requests)
    assert "[turn 1]" in first and "[turn 2]" not in first  # each turn with what came before
    assert "[turn 1]" in second and "[turn 2]" in second


# --- repeats, cassettes, offline ----------------------------------------------------------


def test_repeat_runs_independent_simulations_and_reports_the_pass_rate(
    write: Write, agent_server: OpenAIServer, user_server: OpenAIServer
) -> None:
    outcomes = ["goal_met", "gave_up", "goal_met", "goal_met", "gave_up"]
    for outcome in outcomes:
        agent_server.script(text("Let me see."))
        user_server.script(say(f"Attempt wants {outcome}"), stop(outcome, outcome))
    root = project(write, agent_server, simulate(), user=user_server)

    result, report = run(root, "--repeat", "5")

    (case,) = report["cases"]
    assert case["pass_rate"] == pytest.approx(0.6) and case["flaky"] is True
    assert [r["simulation"]["stopped"] for r in case["runs"]] == outcomes
    # each run opened its own conversation: the agent saw only that run's message
    for request, outcome in zip(agent_server.requests, outcomes, strict=True):
        body = said(request.body)
        assert f"Attempt wants {outcome}" in body
        assert body.count("Attempt wants") == 1
    assert "3/5 runs passed" in flat(result.output)


def test_a_recorded_simulation_replays_with_no_server(
    write: Write, agent_server: OpenAIServer, user_server: OpenAIServer, judge_server: OpenAIServer
) -> None:
    refund_conversation(agent_server)
    user_server.script(say("Order 42"), stop("goal_met", "Refunded."))
    judge_server.script(verdict(0.9, "The refund was issued."))
    case = {
        **simulate(first_message="My order was late."),
        "expected_tools": ["check_order_status", "issue_refund"],
        "evaluations": [{"metric": "goal_completion", "threshold": 0.8}],
    }
    root = project(write, agent_server, case, user=user_server, judge=judge_server)
    cassette = root / "ci.yaml"

    recorded, first = run(root, "--record", str(cassette))
    assert recorded.exit_code == 0, recorded.output
    for server in (agent_server, user_server, judge_server):
        server.stop()
    replayed, second = run(root, "--replay", str(cassette))

    assert replayed.exit_code == 0, replayed.output
    one, two = first_run(first), first_run(second)
    for key in ("turns", "simulation", "tool_check"):
        strip = {"duration_ms"}
        assert _without(one[key], strip) == _without(two[key], strip), key
    assert two["metrics"][0]["reason"] == "The refund was issued."


def _without(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def test_offline_the_user_walks_its_plan_and_stops_with_goal_met(
    write: Write, agent_server: OpenAIServer
) -> None:
    plan = ["It is order 42", "Please refund it", "Thanks"]
    case = {
        **simulate(first_message="My order was late.", plan=plan),
        "expected_tools": ["check_order_status", "issue_refund"],
        "tool_order": "exact",
        "evaluations": ["goal_completion", "knowledge_retention", "role_adherence"],
    }
    root = project(write, agent_server, case)

    result, report = run(root, "--model", "test")

    assert result.exit_code == 0, result.output
    run_ = first_run(report)
    assert [t["input"] for t in run_["turns"]] == ["My order was late.", *plan]
    assert run_["simulation"]["stopped"] == "goal_met"
    assert run_["tool_check"]["passed"]  # the offline agent calls the expected tools once
    assert [m["name"] for m in run_["metrics"]] == [
        "goal_completion",
        "knowledge_retention",
        "role_adherence",
    ]
    assert not any(m["judged"] for m in run_["metrics"])
    # the offline agent answered the user's words, never the plan it had not yet heard
    assert run_["turns"][1]["output"] == "Test answer to: It is order 42"
    assert agent_server.requests == []


# --- definitions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "line", "message"),
    [
        (
            "  - name: both\n    input: Hi\n    simulate: {persona: p, goal: g}\n",
            "agent.yaml:5:",
            "give one of `input`, `turns` or `simulate`, not `input` and `simulate`",
        ),
        (
            "  - name: zero\n    simulate:\n      persona: p\n      goal: g\n      max_turns: 0\n",
            "agent.yaml:9:",
            "max_turns: must be at least 1, not `0`",
        ),
        (
            "  - name: long\n    simulate:\n      persona: p\n      goal: g\n"
            "      max_turns: 1\n      plan: [a, b]\n",
            "agent.yaml:6:",
            "the user has 2 messages to say",
        ),
        (
            "  - name: thresh\n    simulate: {persona: p, goal: g}\n"
            "    evaluations: [{metric: goal_completion, threshold: 4}]\n",
            "agent.yaml:7:",
            "off the 0-1 scale",
        ),
    ],
)
def test_definition_errors_name_their_line(
    write: Write, case: str, line: str, message: str
) -> None:
    head = "name: shop\nmodel: {provider: test}\ninstructions: {inline: Help.}\ntest_cases:\n"
    root = write({"agent.yaml": head + case})
    result = CliRunner().invoke(cli, ["validate", str(root)])
    assert result.exit_code != 0
    assert line in result.output and message in result.output, result.output
    assert "Traceback" not in result.output


def test_an_images_tests_folder_and_a_test_cases_file_take_simulated_users(
    write: Write,
) -> None:
    sim = {
        "name": "refund",
        "simulate": {"persona": PERSONA, "goal": GOAL, "plan": ["Refund order 42", "Thanks"]},
        "expected_tools": ["lookup"],
    }
    image = write(
        {
            "config.yaml": "spec_version: 1\nname: helper\nllm:\n  model: openai/gpt-4o\n",
            "AGENTS.md": "Help customers.\n",
            "tools/python/lookup.py": "def lookup(q: str) -> str:\n    return 'found ' + q\n",
            "tests/sim.yaml": dump({"test_cases": [sim]}),
        }
    )
    agent_yaml = write(
        {
            "agent.yaml": dump(
                {
                    "name": "shop",
                    "model": {"provider": "test"},
                    "instructions": {"inline": "Help customers."},
                    "tools": [
                        {"type": "function", "name": "lookup", "file": "t.py", "function": "lookup"}
                    ],
                    "test_cases_file": "cases.yaml",
                }
            ),
            "t.py": "def lookup(q: str) -> str:\n    return 'found ' + q\n",
            "cases.yaml": dump([sim]),
        }
    )
    for root in (image, agent_yaml):
        result, report = run(root, "--model", "test")
        assert result.exit_code == 0, result.output
        run_ = first_run(report)
        assert [t["input"] for t in run_["turns"]] == ["Refund order 42", "Thanks"]
        assert run_["simulation"]["stopped"] == "goal_met"


def test_an_unknown_user_model_provider_is_an_error_at_its_line(write: Write) -> None:
    text_ = (
        "name: shop\nmodel: {provider: test}\ninstructions: {inline: Help.}\n"
        "evaluations:\n  user_model: {provider: opnai, name: x}\n  metrics: [bleu]\n"
    )
    result = CliRunner().invoke(cli, ["validate", str(write({"agent.yaml": text_}))])
    assert result.exit_code != 0
    assert "agent.yaml:5:" in result.output and "unknown provider `opnai`" in result.output


def test_conversation_metrics_judge_a_scripted_multi_turn_case_too(
    write: Write, agent_server: OpenAIServer, judge_server: OpenAIServer
) -> None:
    agent_server.script(text("Noted, your name is Ada."), text("Sorry, what is your name?"))
    judge_server.script(verdict(0.2, "It forgot the user's name."), verdict(1, "In role."))
    case = {
        "turns": [{"input": "My name is Ada."}, {"input": "What is my name?"}],
        "evaluations": [
            {"metric": "knowledge_retention", "threshold": 0.5},
            {"metric": "role_adherence", "threshold": 0.5},
        ],
    }
    root = project(write, agent_server, case, judge=judge_server)

    result, report = run(root, "--concurrency", "1")

    by_name = {m["name"]: m for m in first_run(report)["metrics"]}
    # both judges saw both turns; role_adherence also the agent's instructions
    bodies = [said(r.body) for r in judge_server.requests]
    assert all("[turn 2]" in b and "What is my name?" in b for b in bodies)
    (role,) = [b for b in bodies if "<role>" in b]
    assert "You are Sam, the shop's refund assistant." in role
    scores = {m["name"]: m["score"] for m in by_name.values()}
    assert sorted(scores.values()) == [0.2, 1.0] and result.exit_code == 1
    failed = [m for m in by_name.values() if m["status"] == "fail"]
    assert [m["reason"] for m in failed] == ["It forgot the user's name."]


def test_the_testing_guides_simulated_user_example_runs_offline(write: Write) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "testing.md").read_text("utf-8")
    section = page.split("### Simulated users", 1)[1]
    example = re.search(r"```yml\n(.*?)```", section, flags=re.S)
    assert example is not None
    head = dump(
        {
            "name": "shop",
            "model": {"provider": "openai", "name": "gpt-4o"},
            "instructions": {"inline": "Help customers with their orders."},
            "tools": [
                {"type": "function", "name": n, "file": "tools.py", "function": n}
                for n in ("check_order_status", "issue_refund")
            ],
        }
    )
    root = write({"agent.yaml": head + example.group(1), "tools.py": TOOLS})

    result, report = run(root, "--model", "test", "-v")

    assert result.exit_code == 0, result.output
    run_ = first_run(report)
    assert [t["input"] for t in run_["turns"]] == [
        "My order was late and I want my money back.",
        "It is order 42",
        "Thanks",
    ]
    assert run_["simulation"]["stopped"] == "goal_met" and run_["tool_check"]["passed"]
    assert "Simulation: ✓ the user's goal was met after 3 turns" in flat(result.output)


@pytest.mark.slow
def test_the_html_report_shows_the_simulation_in_headless_chromium(
    write: Write, agent_server: OpenAIServer, user_server: OpenAIServer, tmp_path: Path
) -> None:
    from browser import chromium_page, playwright_api

    agent_server.script(text("Which order is it?"), text("I cannot refund orders."))
    user_server.script(say("Order 42"), stop("gave_up", "It will not refund."))
    root = project(
        write, agent_server, simulate(first_message="My order was late."), user=user_server
    )
    _, report = run(root)
    path = tmp_path / "report.html"
    path.write_text(render_report(TestRun.model_validate(report), "html"), encoding="utf-8")

    sync_api = playwright_api()
    with chromium_page(sync_api, lambda url: url.startswith("file:"), 1280, 900) as (
        page,
        problems,
    ):
        page.goto(path.as_uri())
        case = page.locator("details.case", has_text="late order")
        case.locator("> summary").click()
        block = case.locator(".simulation")
        sync_api.expect(block).to_be_visible()
        sync_api.expect(block).to_contain_text("GAVE UP")
        sync_api.expect(block).to_contain_text(
            "the user gave up after 2 turns (It will not refund.)"
        )
        sync_api.expect(block).to_contain_text(PERSONA)
        sync_api.expect(case.locator(".msg.user").nth(1)).to_contain_text("Order 42")
        sync_api.expect(case.locator(".msg.agent").nth(1)).to_contain_text("cannot refund")
        page.screenshot(path=str(tmp_path / "simulation.png"), full_page=True)
        assert problems == []


def test_a_user_model_without_a_key_is_refused_before_any_case_runs(
    write: Write, agent_server: OpenAIServer
) -> None:
    case = {
        **simulate(first_message="Hi"),
        "evaluations": [{"metric": "goal_completion"}],
    }
    root = project(write, agent_server, case)
    agent_yaml = root / "agent.yaml"
    agent_yaml.write_text(
        agent_yaml.read_text().replace(
            "evaluations:\n", "evaluations:\n  user_model: {provider: anthropic, name: claude}\n", 1
        )
    )

    result, report = run(root)

    assert result.exit_code == 2 and "Traceback" not in result.output  # a configuration error
    assert result.stderr.startswith("error: the simulated user's model: anthropic/claude: ")
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert report == {} and agent_server.requests == []  # no case ran


def test_goal_completion_without_a_simulated_user_is_a_metric_error(
    write: Write, agent_server: OpenAIServer
) -> None:
    agent_server.script(text("Hello."))
    root = project(write, agent_server, {"input": "Hi", "evaluations": ["goal_completion"]})

    result, report = run(root)

    (metric,) = first_run(report)["metrics"]
    assert metric["status"] == "error" and "needs a simulated user's goal" in metric["error"]
    assert result.exit_code == 0  # an error that does not fail the case (no fail_on_error)


def test_offline_a_turn_expecting_no_tools_calls_none_and_k_finds_a_goal(write: Write) -> None:
    cases = [
        {
            "name": "scripted",
            "turns": [
                {"input": "Where is order 42?", "expected_tools": ["check_order_status"]},
                {"input": "Thanks", "expected_tools": []},
            ],
        },
        {"name": "simulated", **simulate(plan=["Refund 42"])},
    ]
    data = {
        "name": "shop",
        "model": {"provider": "test"},
        "instructions": {"inline": "Help."},
        "tools": [
            {"type": "function", "name": n, "file": "tools.py", "function": n}
            for n in ("check_order_status", "issue_refund")
        ],
        "test_cases": cases,
    }
    root = write({"agent.yaml": dump(data), "tools.py": TOOLS})

    result, report = run(root)
    assert result.exit_code == 0, result.output
    scripted = report["cases"][0]["runs"][0]["turns"]
    assert [[c["name"] for c in t["tool_calls"]] for t in scripted] == [["check_order_status"], []]

    _, picked = run(root, "-k", "refund for order 42")  # words of the simulated user's goal
    assert [c["name"] for c in picked["cases"]] == ["simulated"]


@pytest.mark.parametrize(
    ("metric", "task"),
    [
        ("goal_completion", "achieved the user's goal"),
        ("knowledge_retention", "kept what the user told it earlier"),
        ("role_adherence", "stays in the role its instructions"),
        ("conversation_completeness", "addressed what the user asked for"),
    ],
)
def test_each_conversation_metric_asks_its_own_question_about_the_whole_conversation(
    write: Write,
    agent_server: OpenAIServer,
    user_server: OpenAIServer,
    judge_server: OpenAIServer,
    metric: str,
    task: str,
) -> None:
    refund_conversation(agent_server)
    user_server.script(say("Order 42"), stop("goal_met", "Refunded."))
    judge_server.script(verdict(0.75, f"{metric} reason"))
    case = {**simulate(first_message="My order was late."), "evaluations": [metric]}
    root = project(write, agent_server, case, user=user_server, judge=judge_server)

    result, report = run(root)

    assert result.exit_code == 0, result.output
    (scored,) = first_run(report)["metrics"]
    assert (scored["name"], scored["score"], scored["reason"]) == (metric, 0.75, f"{metric} reason")
    (request,) = judge_server.requests
    shown = said(request.body)
    assert task in shown and "[turn 1]" in shown and "[turn 2]" in shown
    assert (GOAL in shown) == (metric == "goal_completion")
    assert ("You are Sam" in shown) == (metric == "role_adherence")
