"""Metrics: NLP scores equal the reference libraries' (sacrebleu, rouge-score) on the same
strings; judged metrics go over real HTTP to the scripted OpenAI server (what the judge is
shown, retries, rate limits, timeouts) and run offline on the `test` model; code metrics
are real files in an agent directory."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter
from rouge_score import rouge_scorer
from sacrebleu import sentence_bleu

import scripted_servers
from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.llm.cassette import Cassette
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.evaluations import (
    AI_METRICS,
    RAG_METRICS,
    EvaluationConfig,
    Metric,
)
from holodeck.testing.metrics import JudgeFactory, Sample, evaluate
from holodeck.testing.metrics.judge import JUDGE_TOOL, PREAMBLE
from holodeck.testing.metrics.nlp import first_number, normalize_answer, token_f1
from holodeck.testing.results import MetricResult, ToolCallRecord
from scripted_servers import Call, OpenAIServer, delay, rate_limited, tool_calls
from yaml_dump import dump

openai_server = scripted_servers.openai_server

METRIC = TypeAdapter(Metric)

# (output, ground truth): plain, partial, empty output, unicode, punctuation, other scripts
PAIRS = [
    ("The cat sat on the mat.", "The cat sat on the mat."),
    ("The cat is sitting on the mat", "A cat sat on the mat."),
    (
        "Order ORD-1042 shipped on 3 March.",
        "Order ORD-1042 shipped on 3 March and arrives on 6 March.",
    ),
    ("", "Paris is the capital of France."),
    ("Paris is the capital of France.", "Paris"),
    ("Café au lait, naïve façade — déjà vu!", "Le café: naïve façade, déjà vu."),
    ("“Hello,” she said... (quietly); well—OK?!", "Hello! She said it quietly, well, OK."),
    ("東京は日本の首都です。", "日本の首都は東京です。"),
    ("running runs ran", "run running runner"),
]


def metric(**fields: Any) -> Any:
    return METRIC.validate_python(fields)


def score(
    metrics: list[dict[str, Any]], sample: Sample, judges: JudgeFactory
) -> list[MetricResult]:
    return asyncio.run(evaluate([metric(**m) for m in metrics], sample, judges))


def one(fields: dict[str, Any], sample: Sample, judges: JudgeFactory) -> MetricResult:
    (result,) = score([fields], sample, judges)
    return result


@pytest.fixture
def offline(write: Write) -> JudgeFactory:
    """Judges for an agent on the offline `test` model (NLP and code metrics use no judge)."""
    root = write(
        {
            "agent.yaml": dump(
                {"name": "demo", "model": {"provider": "test"}, "instructions": {"inline": "Hi."}}
            )
        }
    )
    spec = load_agent(root)
    return JudgeFactory(spec, spec.evaluations, RunOptions())


# --- NLP: equal to the reference libraries --------------------------------------------------


@pytest.mark.parametrize(("output", "truth"), PAIRS)
def test_bleu_equals_sacrebleu_sentence_bleu_on_a_0_to_1_scale(
    output: str, truth: str, offline: JudgeFactory
) -> None:
    result = one({"metric": "bleu"}, Sample("q", output, truth), offline)
    assert result.status == "pass" and result.kind == "nlp" and result.scale_max == 1.0
    assert result.score == sentence_bleu(output, [truth]).score / 100


@pytest.mark.parametrize(("output", "truth"), PAIRS)
def test_rouge_equals_rouge_score_f_measure_with_stemming(
    output: str, truth: str, offline: JudgeFactory
) -> None:
    reference = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True).score(
        truth, output
    )
    names = ["rouge1", "rouge2", "rougeL", "rouge", "rouge_1", "rouge_l"]
    results = score([{"metric": n} for n in names], Sample("q", output, truth), offline)
    got = {r.name: r.score for r in results}
    assert got == {
        "rouge1": reference["rouge1"].fmeasure,
        "rouge2": reference["rouge2"].fmeasure,
        "rougeL": reference["rougeL"].fmeasure,
        "rouge": reference["rougeL"].fmeasure,  # `rouge` reports ROUGE-L
    }


def test_bleu_and_rouge_give_known_values() -> None:
    # anchors that do not depend on the libraries agreeing with themselves
    assert sentence_bleu(
        "the cat sat on the mat", ["the cat sat on the mat"]
    ).score == pytest.approx(100)
    assert sentence_bleu("", ["the cat sat on the mat"]).score == 0.0
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    # 2 of 3 unigrams shared each way: P = R = F = 2/3
    assert scorer.score("a b c", "a b d")["rouge1"].fmeasure == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("prediction", "truth", "expected"),
    [
        # SQuAD-style examples
        ("Denver Broncos", "The Denver Broncos", 1.0),
        ("the Denver Broncos!", "Denver Broncos", 1.0),
        (
            "Santa Clara, California",
            "Levi's Stadium in the San Francisco Bay Area at Santa Clara, California.",
            6 / 14,  # 3 of the 11 reference tokens (levi's -> levis): 2 * 1 * 3/11 / (1 + 3/11)
        ),
        ("the cat sat on the mat", "The cat is on the mat.", 0.75),  # cat,on,mat of 4 each
        ("cat cat dog", "cat dog dog", 2 / 3),  # bag of tokens: min counts
        ("Paris", "London", 0.0),
        ("The", "the", 1.0),  # both normalise to nothing
        ("", "Paris", 0.0),
        ("“Paris,” of course", "paris of course", 1.0),  # Unicode punctuation removed too
    ],
)
def test_token_f1_follows_squad(prediction: str, truth: str, expected: float) -> None:
    assert token_f1(prediction, truth) == pytest.approx(expected)


def test_squad_normalisation() -> None:
    assert (
        normalize_answer("  The Quick, brown fox; AN apple & a pear.  ")
        == "quick brown fox apple pear"
    )
    assert normalize_answer("theory anthem") == "theory anthem"  # only whole articles go


@pytest.mark.parametrize(
    ("fields", "output", "truth", "expected"),
    [
        ({"metric": "exact_match"}, "The Eiffel Tower.", "eiffel tower", 1.0),
        ({"metric": "exact_match"}, "The Eiffel Tower, Paris", "eiffel tower", 0.0),
        ({"metric": "contains"}, "It ships on\n3  March, we think.", "ships on 3 MARCH", 1.0),
        ({"metric": "contains"}, "It ships on 4 March.", "3 March", 0.0),
        ({"metric": "regex", "pattern": r"ORD-\d+"}, "Your order ORD-1042 shipped", None, 1.0),
        ({"metric": "regex", "pattern": r"^ORD"}, "Your order ORD-1042 shipped", None, 0.0),
        ({"metric": "regex", "pattern": r"(?i)paris"}, "PARIS!", None, 1.0),
        ({"metric": "numeric"}, "It is 42 km away.", "42", 1.0),
        ({"metric": "numeric"}, "About 20.4 degrees", "20", 0.0),
        ({"metric": "numeric", "tolerance": 0.5}, "About 20.4 degrees", "It is 20 °C", 1.0),
        ({"metric": "numeric", "tolerance": 0.5}, "About 20.6 degrees", "20", 0.0),
        ({"metric": "numeric"}, "Total: $1,234.50", "1234.5", 1.0),
        ({"metric": "numeric"}, "Order ORD-1042, -3 items", "1042", 1.0),
        ({"metric": "numeric"}, "No idea.", "7", 0.0),
    ],
)
def test_checks(
    fields: dict[str, Any], output: str, truth: str | None, expected: float, offline: JudgeFactory
) -> None:
    result = one({**fields, "threshold": 1}, Sample("q", output, truth), offline)
    assert result.score == expected
    assert result.status == ("pass" if expected == 1.0 else "fail")
    assert result.fails_case is (expected != 1.0)


def test_numeric_reason_and_first_number(offline: JudgeFactory) -> None:
    assert [
        first_number(t) for t in ["-5 °C", "1,234.5", "1,2,3", ".5", "2e3", "v2.0.1", "none"]
    ] == [
        -5.0,
        1234.5,
        1.0,
        0.5,
        2000.0,
        2.0,
        None,
    ]
    result = one({"metric": "numeric", "tolerance": 0.5}, Sample("q", "About 20.6", "20"), offline)
    assert result.reason == "20.6, expected 20 ± 0.5"


@pytest.mark.parametrize(
    "name", ["f1_score", "bleu", "rouge", "rougeL", "exact_match", "contains", "numeric"]
)
def test_a_metric_needing_ground_truth_is_an_error_that_does_not_fail_the_case(
    name: str, offline: JudgeFactory
) -> None:
    result = one({"metric": name, "threshold": 0.5}, Sample("q", "an answer"), offline)
    assert result.status == "error" and result.score is None
    assert result.error == f"{name} needs the test case's `ground_truth`"
    assert result.fails_case is False
    strict = one({"metric": name, "fail_on_error": True}, Sample("q", "an answer"), offline)
    assert strict.status == "error" and strict.fails_case is True


def test_check_configuration_errors(offline: JudgeFactory) -> None:
    sample = Sample("q", "42", "no number here")
    assert one({"metric": "regex"}, sample, offline).error == "regex needs `pattern`"
    bad = one({"metric": "regex", "pattern": "(unclosed"}, sample, offline)
    assert bad.status == "error" and bad.error is not None and "invalid regex" in bad.error
    assert (
        one({"metric": "numeric"}, sample, offline).error
        == "numeric: the ground truth has no number"
    )


def test_meteor_is_not_an_accepted_metric() -> None:
    from pydantic import ValidationError

    from holodeck.spec.models.evaluations import StandardMetric

    with pytest.raises(ValidationError, match="metric `meteor` is not offered"):
        StandardMetric(metric="meteor")


def test_thresholds_order_and_disabled_metrics(offline: JudgeFactory) -> None:
    sample = Sample("q", "the cat sat on the mat", "The cat is on the mat.")  # F1 0.75
    results = score(
        [
            {"metric": "f1", "threshold": 0.75},  # equal: pass
            {"metric": "f1_score", "threshold": 0.76},
            {"metric": "exact_match", "enabled": False},
            {"metric": "f1_score"},  # informational
        ],
        sample,
        offline,
    )
    assert [(r.name, r.status, r.threshold) for r in results] == [
        ("f1_score", "pass", 0.75),
        ("f1_score", "fail", 0.76),
        ("f1_score", "pass", None),
    ]
    assert [r.fails_case for r in results] == [False, True, False]
    assert all(r.score == pytest.approx(0.75) for r in results)


# --- judged metrics over HTTP -------------------------------------------------------------


def judged_spec(write: Write, server: OpenAIServer, **extra: Any) -> AgentSpec:
    model = {
        "provider": "openai",
        "name": "agent-model",
        "endpoint": server.url,
        "api_key": "sk-test",
    }
    data = {"name": "demo", "model": model, "instructions": {"inline": "Be brief."}, **extra}
    return load_agent(write({"agent.yaml": dump(data)}))


def judges_for(spec: AgentSpec, **options: Any) -> JudgeFactory:
    return JudgeFactory(spec, spec.evaluations, RunOptions(**options))


def verdict(score: Any, reason: str = "Looks right.", **extra: Any) -> Any:
    return tool_calls(Call(JUDGE_TOOL, {"reason": reason, "score": score, **extra}))


def system_and_user(body: dict[str, Any]) -> tuple[str, str]:
    messages = body["messages"]
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    user = "\n\n".join(m["content"] for m in messages if m["role"] == "user")
    return system, user


def verdict_schema(body: dict[str, Any]) -> dict[str, Any]:
    (tool,) = [t for t in body["tools"] if t["function"]["name"] == JUDGE_TOOL]
    schema: dict[str, Any] = tool["function"]["parameters"]
    return schema


RAG_SAMPLE = Sample(
    input="When does order ORD-1042 arrive?",
    output="It shipped on 3 March and arrives on 6 March.",
    ground_truth="Order ORD-1042 arrives on 6 March.",
    retrieval_context=[
        "ORD-1042: shipped 3 March.",
        "ORD-1042: estimated delivery 6 March.",
        "Returns are free.",
    ],
    tool_calls=[
        ToolCallRecord(name="check_order", args={"id": "ORD-1042"}, result={"eta": "6 March"})
    ],
)


def test_groundedness_shows_input_response_and_numbered_context_and_scores_1_to_5(
    write: Write, openai_server: OpenAIServer
) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(verdict(4, "All claims are in the context."))

    result = one({"metric": "groundedness", "threshold": 3.5}, RAG_SAMPLE, judges)

    assert result.model_dump(exclude={"judge_prompt", "duration_ms"}) == {
        "name": "groundedness",
        "kind": "ai",
        "score": 4.0,
        "threshold": 3.5,
        "scale_max": 5.0,
        "status": "pass",
        "reason": "All claims are in the context.",
        "error": None,
        "fails_case": False,
        "judged": True,
    }
    (request,) = openai_server.requests
    body = request.body
    assert body["model"] == "agent-model"  # no evaluations.model: the agent's model judges
    system, user = system_and_user(body)
    assert system.startswith(PREAMBLE) and "grounded" in system
    assert "<input>\nWhen does order ORD-1042 arrive?\n</input>" in user
    assert "<response>\nIt shipped on 3 March and arrives on 6 March.\n</response>" in user
    assert "[1] ORD-1042: shipped 3 March.\n\n[2] ORD-1042: estimated delivery 6 March." in user
    assert "<expected_response>" not in user  # groundedness does not look at the ground truth
    assert result.judge_prompt == f"{system}\n\n{user}"
    schema = verdict_schema(body)
    assert schema["properties"]["score"]["minimum"] == 1
    assert schema["properties"]["score"]["maximum"] == 5
    assert list(schema["properties"]) == ["reason", "score"]


def test_what_each_ai_metric_shows_the_judge(write: Write, openai_server: OpenAIServer) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    names = ["relevance", "coherence", "fluency", "similarity"]
    openai_server.script(*[verdict(3) for _ in names])

    results = score([{"metric": n} for n in names], RAG_SAMPLE, judges)

    assert [(r.name, r.score, r.status) for r in results] == [(n, 3.0, "pass") for n in names]
    shown = {}
    for result in results:
        prompt = result.judge_prompt or ""
        shown[result.name] = [
            tag
            for tag in ("input", "response", "expected_response", "context")
            if f"<{tag}>\n" in prompt
        ]
    assert shown == {
        "relevance": ["input", "response"],
        "coherence": ["input", "response"],
        "fluency": ["response"],
        "similarity": ["input", "response", "expected_response"],
    }
    users = sorted(system_and_user(r.body)[1] for r in openai_server.requests)
    assert any("Order ORD-1042 arrives on 6 March." in u for u in users)  # similarity's truth


def test_custom_prompt_replaces_the_default_instructions(
    write: Write, openai_server: OpenAIServer
) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(verdict(5))
    custom = "You grade customer-support replies. Reward answers that give the delivery date."

    result = one({"metric": "relevance", "custom_prompt": custom}, RAG_SAMPLE, judges)

    assert result.score == 5.0
    system, user = system_and_user(openai_server.requests[0].body)
    assert system.startswith(custom)
    assert PREAMBLE not in system and "addresses the input" not in system
    assert "from 1 to 5" in system
    assert "<input>\nWhen does order ORD-1042 arrive?\n</input>" in user


def test_judge_model_precedence_metric_then_evaluations_then_agent(
    write: Write, openai_server: OpenAIServer
) -> None:
    endpoint = {"endpoint": openai_server.url, "api_key": "sk-test"}
    spec = judged_spec(
        write,
        openai_server,
        evaluations={
            "model": {"provider": "openai", "name": "eval-model", **endpoint},
            "metrics": [{"metric": "fluency"}],
        },
    )
    judges = judges_for(spec)
    openai_server.script(verdict(4), verdict(4), verdict(4))
    metrics = [
        {"metric": "fluency"},
        {
            "metric": "coherence",
            "model": {"provider": "openai", "name": "metric-model", **endpoint},
        },
        {"metric": "relevance"},
    ]

    results = score(metrics, RAG_SAMPLE, judges)

    assert all(r.status == "pass" for r in results)
    assert sorted(r.body["model"] for r in openai_server.requests) == [
        "eval-model",
        "eval-model",
        "metric-model",
    ]
    assert judges.model(None) is judges.model(None)  # one judge per distinct settings
    assert judges.model(None) is not judges.model(metric(**metrics[1]).model)
    without_evaluations = JudgeFactory(spec, None, RunOptions())
    assert without_evaluations.settings_for(None) == spec.model


def test_a_score_outside_the_scale_goes_back_to_the_judge(
    write: Write, openai_server: OpenAIServer
) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(verdict(9), verdict(2, "Off topic."))

    result = one({"metric": "relevance", "threshold": 3}, RAG_SAMPLE, judges)

    assert (result.status, result.score, result.reason, result.fails_case) == (
        "fail",
        2.0,
        "Off topic.",
        True,
    )
    _, second = openai_server.requests
    sent_back = [m for m in second.body["messages"] if m["role"] == "tool"]
    assert sent_back and "less than or equal to 5" in sent_back[-1]["content"]


def test_an_answer_that_never_fits_is_an_error(write: Write, openai_server: OpenAIServer) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(verdict(9), verdict(0), verdict("high"))

    result = one({"metric": "relevance", "threshold": 3}, RAG_SAMPLE, judges)

    assert result.status == "error" and result.fails_case is False and result.score is None
    assert result.error is not None and result.error.startswith(
        "judge: no valid verdict in 3 answers"
    )
    assert len(openai_server.requests) == 3


def test_a_rate_limited_judge_is_retried_by_the_client(
    write: Write, openai_server: OpenAIServer
) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(rate_limited(), verdict(5))

    result = one({"metric": "fluency", "threshold": 4}, RAG_SAMPLE, judges)

    assert (result.status, result.score) == ("pass", 5.0)
    assert len(openai_server.requests) == 2


def test_rate_limited_without_client_retries_is_an_error_then_retry_on_failure_helps(
    write: Write, openai_server: OpenAIServer
) -> None:
    spec = judged_spec(write, openai_server, execution={"max_retries": 0})
    judges = JudgeFactory(spec, spec.evaluations, RunOptions(), rate_limit_backoff_s=0.01)
    openai_server.script(rate_limited())

    failed = one({"metric": "fluency", "threshold": 4}, RAG_SAMPLE, judges)

    assert failed.status == "error" and failed.fails_case is False
    assert failed.error == (
        "judge: openai/agent-model: rate limited (429) after retries. "
        "Wait and try again, lower --concurrency, or raise the quota"
    )
    openai_server.script(rate_limited(), verdict(4))
    retried = one({"metric": "fluency", "threshold": 4, "retry_on_failure": 1}, RAG_SAMPLE, judges)
    assert (retried.status, retried.score) == ("pass", 4.0)
    assert len(openai_server.requests) == 3


def test_a_judge_timeout_is_an_error_that_fails_the_case_only_with_fail_on_error(
    write: Write, openai_server: OpenAIServer
) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    # the judge would answer after 10 minutes (the server cuts that short when it stops)
    openai_server.script(delay(600, verdict(5)), delay(600, verdict(5)))
    started = time.perf_counter()

    lenient, strict = score(
        [
            {"metric": "fluency", "threshold": 3, "timeout_ms": 200},
            {"metric": "coherence", "threshold": 3, "timeout_ms": 200, "fail_on_error": True},
        ],
        RAG_SAMPLE,
        judges,
    )

    assert time.perf_counter() - started < 300  # the timeout ended it, not the answer
    assert (lenient.status, lenient.error, lenient.fails_case) == (
        "error",
        "judge: no answer within 200 ms",
        False,
    )
    assert (strict.status, strict.fails_case) == ("error", True)
    assert lenient.judge_prompt is not None  # what was asked is kept even when it failed


def test_retry_on_failure_retries_after_a_timeout(
    write: Write, openai_server: OpenAIServer
) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(delay(5, verdict(1)), verdict(4))

    result = one(
        {"metric": "fluency", "timeout_ms": 300, "retry_on_failure": 1}, RAG_SAMPLE, judges
    )
    assert (result.status, result.score) == ("pass", 4.0)

    openai_server.script(delay(5, verdict(1)), delay(5, verdict(1)))
    failed = one(
        {"metric": "fluency", "timeout_ms": 200, "retry_on_failure": 1}, RAG_SAMPLE, judges
    )
    assert failed.error == "judge: no answer within 200 ms (2 attempts)"


def test_a_judge_without_credentials_is_an_error(write: Write) -> None:
    root = write(
        {
            "agent.yaml": dump(
                {
                    "name": "demo",
                    "model": {"provider": "openai", "name": "gpt-4o"},
                    "instructions": {"inline": "Hi."},
                }
            )
        }
    )
    spec = load_agent(root)
    result = one({"metric": "fluency"}, RAG_SAMPLE, JudgeFactory(spec, None, RunOptions()))
    assert result.status == "error" and result.fails_case is False
    assert result.error is not None and result.error.startswith(
        "judge: openai/gpt-4o: no API key is set"
    )


def test_judges_record_into_and_replay_from_the_run_cassette(
    write: Write, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    spec = judged_spec(write, openai_server)
    path = tmp_path / "run-cassette.yaml"
    openai_server.script(verdict(4, "Reads well."))

    recorded = one(
        {"metric": "fluency"}, RAG_SAMPLE, judges_for(spec, cassette=Cassette.record(path))
    )
    assert path.is_file()  # saved after the judge's answer, not only at the end of a run
    replayed = one(
        {"metric": "fluency"}, RAG_SAMPLE, judges_for(spec, cassette=Cassette.replay(path))
    )

    assert (
        (recorded.score, recorded.reason)
        == (replayed.score, replayed.reason)
        == (4.0, "Reads well.")
    )
    assert len(openai_server.requests) == 1  # the replay asked no model


# --- G-Eval -------------------------------------------------------------------------------


def test_geval_normalises_0_to_10_and_shows_only_the_chosen_params(
    write: Write, openai_server: OpenAIServer
) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(verdict(7, "Mostly empathetic."))
    fields = {
        "type": "geval",
        "name": "empathy",
        "criteria": "The answer acknowledges the customer's problem.",
        "evaluation_steps": ["Find the problem in the input.", "Check the answer acknowledges it."],
        "evaluation_params": ["input", "actual_output", "expected_output"],
        "threshold": 0.7,
    }

    result = one(fields, RAG_SAMPLE, judges)

    assert (result.name, result.kind, result.score, result.status, result.scale_max) == (
        "empathy",
        "geval",
        0.7,
        "pass",
        1.0,
    )
    system, user = system_and_user(openai_server.requests[0].body)
    assert "The answer acknowledges the customer's problem." in system
    assert "1. Find the problem in the input.\n2. Check the answer acknowledges it." in system
    assert "<input>" in user and "<response>" in user and "<expected_response>" in user
    assert "<context>" not in user
    schema = verdict_schema(openai_server.requests[0].body)
    assert "evaluation_steps" not in schema["properties"]
    assert (schema["properties"]["score"]["minimum"], schema["properties"]["score"]["maximum"]) == (
        0,
        10,
    )


def test_geval_writes_its_own_steps_in_the_same_call(
    write: Write, openai_server: OpenAIServer
) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(verdict(4, "Curt.", evaluation_steps=["Read it.", "Is it polite?"]))
    fields = {
        "type": "geval",
        "name": "polite",
        "criteria": "The answer is polite.",
        "evaluation_params": ["actual_output", "retrieval_context"],
    }

    result = one(fields, RAG_SAMPLE, judges)

    assert (result.score, result.status) == (0.4, "pass")  # no threshold: informational
    (request,) = openai_server.requests
    system, user = system_and_user(request.body)
    assert "write 3 to 5 concise evaluation steps" in system
    assert "<input>" not in user and "<response>" in user and "[3] Returns are free." in user
    assert list(verdict_schema(request.body)["properties"]) == [
        "evaluation_steps",
        "reason",
        "score",
    ]
    assert result.judge_prompt is not None
    assert result.judge_prompt.endswith(
        "(evaluation steps the judge wrote)\n1. Read it.\n2. Is it polite?"
    )


def test_geval_strict_mode_is_0_or_1(write: Write, openai_server: OpenAIServer) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(verdict(0.5), verdict(1, "Fully met."), verdict(0, "Not met."))
    fields = {
        "type": "geval",
        "name": "cites",
        "criteria": "The answer gives the date.",
        "evaluation_steps": ["Look for a date."],
        "strict_mode": True,
        "threshold": 1,
    }

    met = one(fields, RAG_SAMPLE, judges)
    unmet = one(fields, RAG_SAMPLE, judges)

    assert (met.score, met.status) == (1.0, "pass")
    assert (unmet.score, unmet.status, unmet.fails_case) == (0.0, "fail", True)
    assert len(openai_server.requests) == 3  # 0.5 was sent back
    schema = verdict_schema(openai_server.requests[0].body)["properties"]["score"]
    assert (schema["type"], schema["minimum"], schema["maximum"]) == ("integer", 0, 1)


def test_geval_missing_params_are_errors(offline: JudgeFactory) -> None:
    base = {"type": "geval", "name": "g", "criteria": "c"}
    no_truth = one({**base, "evaluation_params": ["expected_output"]}, Sample("q", "a"), offline)
    assert no_truth.error == "g needs the test case's `ground_truth`"
    no_context = one({**base, "evaluation_params": ["context"]}, Sample("q", "a", "t"), offline)
    assert no_context.status == "error" and "retrieval context" in (no_context.error or "")


# --- RAG ----------------------------------------------------------------------------------


def test_faithfulness_judges_with_the_retrieval_context(
    write: Write, openai_server: OpenAIServer
) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(verdict(0.75, "3 of 4 claims are supported."))

    result = one(
        {"type": "rag", "metric_type": "faithfulness", "threshold": 0.8}, RAG_SAMPLE, judges
    )

    assert (result.name, result.kind, result.score, result.status, result.scale_max) == (
        "faithfulness",
        "rag",
        0.75,
        "fail",
        1.0,
    )
    body = openai_server.requests[0].body
    system, user = system_and_user(body)
    assert "supported claims divided by the number of claims" in system
    assert "[1] ORD-1042: shipped 3 March." in user and "<response>" in user
    score_schema = verdict_schema(body)["properties"]["score"]
    assert (score_schema["minimum"], score_schema["maximum"]) == (0, 1)


def test_rag_metrics_see_what_they_need(write: Write, openai_server: OpenAIServer) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(*[verdict(1) for _ in RAG_METRICS])

    results = score([{"type": "rag", "metric_type": m} for m in RAG_METRICS], RAG_SAMPLE, judges)

    assert [r.status for r in results] == ["pass"] * len(RAG_METRICS)
    shown = {
        r.name: [
            t
            for t in ("input", "response", "expected_response", "context")
            if f"<{t}>\n" in (r.judge_prompt or "")
        ]
        for r in results
    }
    assert shown == {
        "faithfulness": ["input", "response", "context"],
        "answer_relevancy": ["input", "response"],
        "contextual_precision": ["input", "expected_response", "context"],
        "contextual_recall": ["input", "expected_response", "context"],
        "contextual_relevancy": ["input", "context"],
    }


def test_rag_without_context_or_ground_truth_is_an_error_and_asks_no_judge(
    write: Write, openai_server: OpenAIServer
) -> None:
    judges = judges_for(judged_spec(write, openai_server))
    openai_server.script(verdict(5))  # for groundedness, which has its context
    no_context = Sample("q", "an answer", "the truth", retrieval_context=["", "  "])
    no_truth = Sample("q", "an answer", None, retrieval_context=["a chunk"])

    results = score(
        [
            {"type": "rag", "metric_type": "faithfulness"},
            {"type": "rag", "metric_type": "contextual_relevancy", "fail_on_error": True},
        ],
        no_context,
        judges,
    ) + score(
        [
            {"type": "rag", "metric_type": "contextual_recall"},
            {"metric": "groundedness"},
            {"metric": "similarity"},
        ],
        no_truth,
        judges,
    )

    assert [r.status for r in results] == ["error", "error", "error", "pass", "error"]
    faithfulness, relevancy, recall = results[:3]
    assert faithfulness.error == (
        "faithfulness needs retrieval context: give the test case `retrieval_context`, or let the agent call tools"
    )
    assert (faithfulness.fails_case, relevancy.fails_case) == (False, True)
    assert recall.error == "contextual_recall needs the test case's `ground_truth`"
    assert results[4].error == "similarity needs the test case's `ground_truth`"
    assert len(openai_server.requests) == 1  # only groundedness asked the judge


# --- the offline test model as judge ---------------------------------------------------------


def test_the_offline_test_model_judges_every_kind_in_range_but_is_not_a_judgement(
    write: Write,
) -> None:
    """`holodeck test --model test`: judged metrics run offline with valid scores, marked
    not judged (the offline judge gives the top score) and failing no case."""
    spec = load_agent(
        write(
            {
                "agent.yaml": dump(
                    {
                        "name": "demo",
                        "model": {"provider": "openai", "name": "gpt-4o"},
                        "instructions": {"inline": "Hi."},
                    }
                )
            }
        )
    )
    judges = JudgeFactory(
        spec, EvaluationConfig(metrics=[{"metric": "fluency"}]), RunOptions(model="test")
    )
    metrics = [
        *({"metric": m, "threshold": 1} for m in AI_METRICS),
        *({"type": "rag", "metric_type": m, "threshold": 0} for m in RAG_METRICS),
        {"type": "geval", "name": "g1", "criteria": "Polite.", "threshold": 0},
        {
            "type": "geval",
            "name": "g2",
            "criteria": "Polite.",
            "strict_mode": True,
            "evaluation_steps": ["Check."],
        },
    ]

    results = score(metrics, RAG_SAMPLE, judges)

    assert [r.status for r in results] == ["pass"] * len(metrics), [r.error for r in results]
    for result in results:
        assert result.score is not None and result.reason is not None
        assert result.judged is False and result.fails_case is False
        low = 1.0 if result.kind == "ai" else 0.0
        assert low <= result.score <= result.scale_max
    assert judges.model(None).name is None and judges.model(None).provider == "test"


# --- code metrics ---------------------------------------------------------------------------

CODE = """
import asyncio

def as_float(output):
    return len(output) / 100

def as_tuple(output, ground_truth):
    return (1.0 if ground_truth in output else 0.0), "looked for the truth"

def as_dict(**kwargs):
    return {"score": 0.5, "reason": ",".join(sorted(kwargs))}

async def as_async(input, context):
    await asyncio.sleep(0)
    return {"score": len(context) / 4, "reason": input}

def sees(tool_calls, context, ground_truth=None, structured_output=None, extra=3):
    call = tool_calls[0]
    return len(tool_calls), f"{call['name']}:{call['args']['id']}:{call['result']['eta']}:{context[1]}:{ground_truth}:{structured_output}:{extra}"

def raises(output):
    value = {}
    return value["missing"]

def wrong_shape(output):
    return "high"

def wants_unknown(answer):
    return 1.0

def as_bool(output):
    return "6 March" in output

NOT_A_FUNCTION = 3

_MET = {}

def _arrive(name):
    return _MET.setdefault(name, asyncio.Event())

async def meet_a():
    _arrive("a").set()
    await asyncio.wait_for(_arrive("b").wait(), 5)
    return 1.0

async def meet_b():
    _arrive("b").set()
    await asyncio.wait_for(_arrive("a").wait(), 5)
    return 1.0
"""


@pytest.fixture
def code_judges(write: Write) -> JudgeFactory:
    root = write(
        {
            "agent.yaml": dump(
                {"name": "demo", "model": {"provider": "test"}, "instructions": {"inline": "Hi."}}
            ),
            "metrics/checks.py": CODE,
        }
    )
    return JudgeFactory(load_agent(root), None, RunOptions())


def code(function: str, **extra: Any) -> dict[str, Any]:
    return {"type": "code", "file": "metrics/checks.py", "function": function, **extra}


def test_code_metric_return_forms(code_judges: JudgeFactory) -> None:
    sample = Sample(**{**RAG_SAMPLE.__dict__, "structured_output": {"eta": "6 March"}})
    results = score(
        [
            code("as_float", threshold=0.4),
            code("as_tuple", name="has_truth", threshold=1),
            code("as_dict"),
            code("as_async", threshold=0.75),
            code("sees"),
            code("as_bool", threshold=1),
        ],
        sample,
        code_judges,
    )
    got = [(r.name, r.kind, r.score, r.status, r.reason) for r in results]
    assert got == [
        ("as_float", "code", len(sample.output) / 100, "pass", None),
        ("has_truth", "code", 0.0, "fail", "looked for the truth"),
        (
            "as_dict",
            "code",
            0.5,
            "pass",
            "context,ground_truth,input,output,structured_output,tool_calls",
        ),
        ("as_async", "code", 0.75, "pass", sample.input),
        (
            "sees",
            "code",
            1.0,
            "pass",
            "check_order:ORD-1042:6 March:ORD-1042: estimated delivery 6 March.:Order ORD-1042 arrives on 6 March.:{'eta': '6 March'}:3",
        ),
        ("as_bool", "code", 1.0, "pass", None),
    ]


def test_code_metric_errors(code_judges: JudgeFactory) -> None:
    results = score(
        [
            code("raises"),
            code("wrong_shape", fail_on_error=True),
            code("wants_unknown"),
            code("absent"),
            code("NOT_A_FUNCTION"),
            {"type": "code", "file": "metrics/nope.py", "function": "f"},
        ],
        RAG_SAMPLE,
        code_judges,
    )
    assert [r.status for r in results] == ["error"] * 6
    assert [r.fails_case for r in results] == [False, True, False, False, False, False]
    errors = [r.error or "" for r in results]
    line = CODE.lstrip("\n").splitlines().index('    return value["missing"]') + 1
    assert errors[0] == f"KeyError: 'missing' (line {line} of checks.py)"
    assert (
        errors[1]
        == "`wrong_shape` returned a str; return a number, (score, reason) or {'score': ..., 'reason': ...}"
    )
    assert errors[2].startswith("`wants_unknown` takes `answer`, which a metric is not given")
    assert errors[3].endswith("checks.py: no function `absent`")
    assert errors[4].endswith("checks.py: `NOT_A_FUNCTION` is not a function")
    assert "nope.py" in errors[5] and "cannot read" in errors[5]


def test_independent_metrics_run_concurrently(code_judges: JudgeFactory) -> None:
    # each waits (up to 5 s) until the other has started: one after the other, the first
    # would time out and be an error
    results = score([code("meet_a"), code("meet_b")], RAG_SAMPLE, code_judges)
    assert [r.status for r in results] == ["pass", "pass"]


def test_evaluate_results_are_json_ready(offline: JudgeFactory) -> None:
    results = score(
        [{"metric": "bleu"}, {"metric": "contains"}], Sample("q", "a b c", "b c"), offline
    )
    json.dumps([r.model_dump(mode="json") for r in results])
    assert isinstance(results[0], MetricResult)
    assert all(r.duration_ms >= 0 for r in results)


def test_sample_knows_what_it_lacks() -> None:
    assert Sample("q", "a", " ").has_ground_truth is False
    assert Sample("q", "a", retrieval_context=["x"]).has_context is True
