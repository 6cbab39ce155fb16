"""Guardrails through `holodeck chat` (a real process, questions piped in), `holodeck test`
and `holodeck deploy` (a real server process), with the agent's model and the judge
scripted OpenAI-compatible servers on 127.0.0.1: an input check blocks before any model
request, an output check redacts a card number the model wrote, a judge blocks."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from click.testing import CliRunner

import scripted_servers
from conftest import Write
from holodeck.cli.main import cli
from scripted_servers import Call, OpenAIServer, text, tool_calls
from server_harness import deploy_process, log_lines, parse_sse
from test_controls import agent_files
from test_controls_cli import chat
from yaml_dump import dump

openai_server = scripted_servers.openai_server

REFUSAL = "I cannot help with passwords."
CARD = "4111 1111 1111 1111"  # a Luhn-valid test number
GUARDRAILS = {
    "input": [
        {"name": "no-secrets", "block_keywords": ["password"], "message": REFUSAL},
        {"name": "no-emails", "pii": ["email"], "action": "redact"},
    ],
    "output": [{"name": "no-cards", "pii": ["card"], "action": "redact"}],
}
JUDGE_REFUSAL = "Questions about Canada go to the travel desk."


@pytest.fixture
def judge_server() -> Iterator[OpenAIServer]:
    server = OpenAIServer().start()
    yield server
    server.stop()


def guarded(server: OpenAIServer, **extra: Any) -> dict[str, str]:
    return agent_files(server, guardrails=extra.pop("guardrails", GUARDRAILS), **extra)


def judged(server: OpenAIServer, judge: OpenAIServer, side: str, **extra: Any) -> dict[str, str]:
    model = {"provider": "openai", "name": "gpt-4o-mini", "endpoint": judge.url, "api_key": "j"}
    check = {
        "name": "no-canada",
        "judge": {"criteria": "The text must not be about Canada.", "model": model},
        "message": JUDGE_REFUSAL,
    }
    return agent_files(server, guardrails={side: [check]}, **extra)


def refuses(reason: str) -> scripted_servers.Reply:
    return tool_calls(Call("verdict", {"reason": reason, "allowed": False}))


def user_messages(request: scripted_servers.Recorded) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


# --- chat -----------------------------------------------------------------------------


def test_chat_blocks_a_question_before_the_model_and_redacts_a_card_in_an_answer(
    write: Write, openai_server: OpenAIServer
) -> None:
    root = write(guarded(openai_server))
    openai_server.script(text(f"Your card {CARD} is on file."), text("Anything else?"))

    blocked = chat(root, "what is my Password?")
    assert openai_server.requests == []  # the model never saw it
    redacted = chat(root, "which card do I use?")
    chat(root, "thanks")

    assert blocked.returncode == 0
    assert REFUSAL in blocked.stdout
    assert "guardrail no-secrets (block_keywords) blocked the question" in blocked.stderr
    assert "Your card [card] is on file." in redacted.stdout and "4111" not in redacted.stdout
    assert "guardrail no-cards (pii) redacted the answer" in redacted.stderr
    # the session kept neither the blocked question nor the card number
    last = openai_server.requests[-1].body["messages"]
    assert user_messages(openai_server.requests[-1]) == ["which card do I use?", "thanks"]
    assert [m["content"] for m in last if m["role"] == "assistant"] == [
        "Your card [card] is on file."
    ]


def test_chat_shows_a_judges_block_and_its_reason(
    write: Write, openai_server: OpenAIServer, judge_server: OpenAIServer
) -> None:
    root = write(judged(openai_server, judge_server, "input"))
    judge_server.script(refuses("Toronto is in Canada."))

    done = chat(root, "Best time to visit Toronto?")

    assert JUDGE_REFUSAL in done.stdout
    assert "guardrail no-canada (judge) blocked the question: Toronto is in Canada." in (
        done.stderr
    )
    assert openai_server.requests == [] and len(judge_server.requests) == 1


# --- test ---------------------------------------------------------------------------


def run_tests(root: Path, tmp_path: Path) -> dict[str, Any]:
    report = tmp_path / "run.json"
    result = CliRunner(env={"OPENAI_API_KEY": "k"}).invoke(
        cli, ["test", str(root / "agent.yaml"), "--output", str(report)]
    )
    assert report.exists(), result.output
    run: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return {case["name"]: case for case in run["cases"]}


def test_holodeck_test_cases_can_assert_a_block_and_a_redaction(
    write: Write, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    cases = [
        {"name": "refused", "input": "my password is hunter2", "ground_truth": REFUSAL},
        {"name": "masked", "input": "which card?", "ground_truth": "card [card] is"},
        {"name": "leaks", "input": "which card, really?", "ground_truth": CARD},
    ]
    root = write(
        guarded(
            openai_server,
            test_cases=cases,
            evaluations={"metrics": [{"metric": "contains"}]},
            execution={"max_retries": 0, "parallel_test_cases": 1},
        )
    )
    openai_server.script(text(f"The card {CARD} is yours."), text(f"It is {CARD}."))

    cases_by_name = run_tests(root, tmp_path)

    refused = cases_by_name["refused"]["runs"][0]
    assert refused["status"] == "pass"
    (turn,) = refused["turns"]
    assert turn["output"] == REFUSAL
    assert turn["guardrails"] == [
        {
            "guardrail": "no-secrets",
            "side": "input",
            "action": "block",
            "kind": "block_keywords",
            "reason": None,
            "agent": "",
        }
    ]
    masked = cases_by_name["masked"]["runs"][0]
    assert masked["status"] == "pass"
    assert masked["turns"][0]["guardrails"][0]["action"] == "redact"
    # a case expecting the card number fails: the guardrail holds in tests too
    assert cases_by_name["leaks"]["runs"][0]["status"] == "fail"
    assert len(openai_server.requests) == 2  # none for the refused case


def test_holodeck_test_records_a_judge_that_blocks_the_question(
    write: Write, openai_server: OpenAIServer, judge_server: OpenAIServer, tmp_path: Path
) -> None:
    cases = [
        {"name": "canada", "input": "Best time to visit Toronto?", "ground_truth": "travel desk"}
    ]
    root = write(
        judged(
            openai_server,
            judge_server,
            "input",
            test_cases=cases,
            evaluations={"metrics": [{"metric": "contains"}]},
        )
    )
    judge_server.script(refuses("Toronto is in Canada."))

    run = run_tests(root, tmp_path)["canada"]["runs"][0]

    assert run["status"] == "pass"
    assert run["turns"][0]["output"] == JUDGE_REFUSAL
    assert run["turns"][0]["guardrails"][0]["reason"] == "Toronto is in Canada."
    assert openai_server.requests == []
    # the judge was shown the question and the criteria, and answered through its tool
    (asked,) = judge_server.requests
    assert "Best time to visit Toronto?" in user_messages(asked)[0]
    assert "must not be about Canada" in asked.body["messages"][0]["content"]


# --- deploy ---------------------------------------------------------------------------


def test_deploy_blocks_redacts_and_says_so_in_json_sse_and_openai_answers(
    tmp_path: Path, openai_server: OpenAIServer, isolated_home: Path
) -> None:
    root = tmp_path / "demo"
    root.mkdir()
    for name, content in guarded(openai_server).items():
        (root / name).write_text(content, encoding="utf-8")
    openai_server.script(text(f"Pay with {CARD} today."))
    env = {"HOLODECK_HOME": os.environ["HOLODECK_HOME"]}

    with (
        deploy_process(str(root), env=env, cwd=tmp_path) as (_, url),
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        blocked = client.post("/v1/chat", json={"message": "reset my password"}).json()
        compat = client.post(
            "/v1/chat/completions",
            json={"model": "demo", "messages": [{"role": "user", "content": "PASSWORD?"}]},
        ).json()
        streamed_compat = {"model": "demo", "stream": True}
        streamed_compat["messages"] = [{"role": "user", "content": "my password?"}]
        with client.stream("POST", "/v1/chat/completions", json=streamed_compat) as response:
            chunks = [
                json.loads(line[5:])
                for line in response.iter_lines()
                if line.startswith("data:") and "[DONE]" not in line
            ]
        assert openai_server.requests == []
        body = {"message": "how do I pay? I am ann@example.com", "stream": True}
        with client.stream("POST", "/v1/chat", json=body) as response:
            events = parse_sse(response.iter_lines())

    assert blocked["response"] == REFUSAL
    assert blocked["guardrails"][0]["guardrail"] == "no-secrets"
    assert blocked["guardrails"][0]["action"] == "block"
    assert compat["choices"][0]["message"]["content"] == REFUSAL
    assert compat["choices"][0]["finish_reason"] == "content_filter"
    deltas = [c["choices"][0] for c in chunks if c["choices"]]
    assert "".join(d["delta"].get("content", "") for d in deltas) == REFUSAL
    assert deltas[-1]["finish_reason"] == "content_filter"
    streamed = "".join(data["text"] for name, data in events if name == "text")
    assert streamed == "Pay with [card] today."
    hits = [(d["guardrail"], d["side"], d["action"]) for n, d in events if n == "guardrail"]
    assert hits == [("no-emails", "input", "redact"), ("no-cards", "output", "redact")]
    final = events[-1][1]
    assert final["response"] == "Pay with [card] today."
    assert "4111" not in json.dumps(events)
    (asked,) = openai_server.requests
    assert user_messages(asked) == ["how do I pay? I am [email]"]
    # the request log keeps the question as the model saw it and the answer as sent
    logged = log_lines(isolated_home, "demo")[-1]
    assert (logged["message_input"], logged["response"]) == (
        "how do I pay? I am [email]",
        "Pay with [card] today.",
    )


def test_a_served_answer_the_judge_refuses_is_never_streamed(
    tmp_path: Path,
    openai_server: OpenAIServer,
    judge_server: OpenAIServer,
    isolated_home: Path,
) -> None:
    root = tmp_path / "demo"
    root.mkdir()
    for name, content in judged(openai_server, judge_server, "output").items():
        (root / name).write_text(content, encoding="utf-8")
    (root / "config.yaml").write_text(dump({}), encoding="utf-8")
    openai_server.script(text("Go to Toronto in the autumn."))
    judge_server.script(refuses("It recommends a Canadian city."))

    with (
        deploy_process(str(root), env={"HOLODECK_HOME": str(isolated_home)}, cwd=tmp_path) as (
            _,
            url,
        ),
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        body = {"message": "Where should I travel?", "stream": True}
        with client.stream("POST", "/v1/chat", json=body) as response:
            events = parse_sse(response.iter_lines())

    streamed = "".join(data["text"] for name, data in events if name == "text")
    assert streamed == JUDGE_REFUSAL
    assert "Toronto" not in json.dumps([data for name, data in events if name != "guardrail"])
    (hit,) = [data for name, data in events if name == "guardrail"]
    assert hit["kind"] == "judge" and hit["reason"] == "It recommends a Canadian city."
    (asked,) = judge_server.requests
    assert "Go to Toronto in the autumn." in user_messages(asked)[0]
