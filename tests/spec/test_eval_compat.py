"""agent.yaml evaluations written the way earlier HoloDeck releases document them.

One test per form (see docs/compatibility.md): it loads and does what it says, scored by
the metric functions directly (as in test_metrics.py) or by `holodeck test --model test`,
or it is refused with a message that says what to write instead.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import TypeAdapter, ValidationError

from conftest import Write
from holodeck import RunOptions
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.spec.diagnostics import SpecError
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.evaluations import Metric, RagMetric, StandardMetric
from holodeck.testing.metrics import JudgeFactory, Sample, evaluate
from holodeck.testing.results import MetricResult

METRIC = TypeAdapter(Metric)

HEAD = """\
name: weather
model: {provider: test}
instructions: {inline: Answer about the weather.}
tools:
  - {type: function, name: get_weather, description: Weather., file: tools.py, function: get_weather}
"""
TOOLS = "def get_weather(city: str) -> str:\n    return f'sunny in {city}'\n"


def agent(write: Write, body: str, **files: str) -> Path:
    return write({"agent.yaml": HEAD + body, "tools.py": TOOLS, **files})


def refused(root: Path) -> str:
    with pytest.raises(SpecError) as caught:
        load_agent(root)
    return caught.value.render()


def one(fields: dict[str, Any] | str, sample: Sample, judges: JudgeFactory) -> MetricResult:
    (result,) = asyncio.run(evaluate([METRIC.validate_python(fields)], sample, judges))
    return result


@pytest.fixture
def offline(write: Write) -> JudgeFactory:
    """Judges on the offline `test` model (it always gives the top score)."""
    spec = load_agent(agent(write, ""))
    return JudgeFactory(spec, spec.evaluations, RunOptions())


# --- metrics as bare names -------------------------------------------------------------------


def test_bare_metric_names_are_the_metrics_with_their_defaults(
    write: Write, offline: JudgeFactory
) -> None:
    spec = load_agent(
        agent(write, "evaluations:\n  metrics: [f1_score, f1, bleu, faithfulness, equality]\n")
    )
    assert spec.evaluations is not None
    metrics = spec.evaluations.metrics
    assert [m.metric for m in metrics if isinstance(m, StandardMetric)] == [
        "f1_score",
        "f1_score",
        "bleu",
        "equality",
    ]
    assert isinstance(metrics[3], RagMetric) and metrics[3].metric_type == "faithfulness"
    scored = one("f1_score", Sample("q", "it is sunny", "it is sunny"), offline)
    assert (scored.name, scored.score, scored.status) == ("f1_score", 1.0, "pass")


def test_an_unknown_bare_name_lists_the_known_metrics(write: Write) -> None:
    message = refused(agent(write, "evaluations:\n  metrics: [bleu, f1_scor]\n"))
    assert "agent.yaml:7" in message
    assert "unknown metric `f1_scor` (did you mean `f1_score`?); known: groundedness," in message
    assert "faithfulness" in message
    assert "`type`" not in message  # never "required field `type` is missing"


def test_meteor_and_safety_are_refused_with_what_to_write(write: Write) -> None:
    message = refused(agent(write, "evaluations:\n  metrics: [meteor, {metric: safety}]\n"))
    assert "metric `meteor` is not offered" in message and "use `rouge` or `bleu`" in message
    assert "metric `safety` is not offered" in message and "type: geval" in message


# --- equality ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "score"),
    [
        ({}, 0.0),
        ({"case_insensitive": True}, 0.0),
        ({"case_insensitive": True, "strip_whitespace": True}, 0.0),
        ({"case_insensitive": True, "strip_whitespace": True, "strip_punctuation": True}, 1.0),
    ],
)
def test_equality_compares_as_written_unless_told_otherwise(
    offline: JudgeFactory, flags: dict[str, bool], score: float
) -> None:
    sample = Sample("Refund?", "  Yes,   APPROVED. ", "yes approved")
    assert one({"metric": "equality", **flags}, sample, offline).score == score


def test_equality_flags_on_another_metric_are_refused() -> None:
    with pytest.raises(ValidationError, match="`strip_whitespace` applies to `metric: equality`"):
        METRIC.validate_python({"metric": "bleu", "strip_whitespace": True})


# --- numeric ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "output", "truth", "score"),
    [
        ({"absolute_tolerance": 0.5}, "31903.9", "31903.61446", 1.0),
        ({"absolute_tolerance": 0.1}, "31903.9", "31903.61446", 0.0),
        # 1% of 25587 is 255.87
        ({"relative_tolerance": 0.01}, "25800", "25587", 1.0),
        ({"relative_tolerance": 0.001}, "25800", "25587", 0.0),
        # either tolerance passes
        ({"relative_tolerance": 0.01, "absolute_tolerance": 1e-6}, "0.0601", "0.05995", 1.0),
        # without accept_percent, `13.7%` reads as 13.7
        ({"absolute_tolerance": 0.5}, "13.7%", "0.05995", 0.0),
        ({"accept_percent": True, "relative_tolerance": 0.01}, "33.2 %", "0.332", 1.0),
        ({"relative_tolerance": 0.01}, "33.2%", "0.332", 0.0),
        ({"accept_thousands_separators": True}, "1\u00a0234\u00a0567", "1,234,567", 1.0),
        ({"accept_thousands_separators": True}, "1_234", "1234", 1.0),
        ({}, "1\u00a0234\u00a0567", "1,234,567", 0.0),  # reads 1
        ({}, "1,234,567", "1234567", 1.0),  # commas always group
    ],
)
def test_numeric_options_change_what_passes(
    offline: JudgeFactory, options: dict[str, Any], output: str, truth: str, score: float
) -> None:
    result = one({"metric": "numeric", **options}, Sample("q", output, truth), offline)
    assert result.score == score, result.reason


def test_numeric_options_elsewhere_and_two_absolute_tolerances_are_refused() -> None:
    with pytest.raises(ValidationError, match="`relative_tolerance` applies to `metric: numeric`"):
        METRIC.validate_python({"metric": "f1_score", "relative_tolerance": 0.1})
    with pytest.raises(ValidationError, match="`tolerance` or `absolute_tolerance`"):
        METRIC.validate_python({"metric": "numeric", "tolerance": 1, "absolute_tolerance": 1})


# --- response_path ----------------------------------------------------------------------------


def test_response_path_scores_one_field_of_the_structured_output(offline: JudgeFactory) -> None:
    structured = {"why": "82767 / 1380573", "answer": 0.0601}
    sample = Sample("q", json.dumps(structured), "0.05995", structured_output=structured)
    whole = one({"metric": "numeric", "relative_tolerance": 0.01}, sample, offline)
    assert whole.score == 0.0  # the first number of the whole text is 82767
    picked = {"metric": "numeric", "relative_tolerance": 0.01, "response_path": "answer"}
    assert one(picked, sample, offline).score == 1.0
    # `why` read as a number is 82767
    why = {"metric": "numeric", "relative_tolerance": 0.01, "response_path": "why"}
    assert one(why, sample, offline).score == 0.0


def test_response_path_reads_json_text_and_nested_paths(offline: JudgeFactory) -> None:
    text = '```json\n{"result": {"items": [{"label": "Spam"}, {"label": "ham"}]}}\n```'
    sample = Sample("q", text, "spam")
    fields = {"metric": "equality", "case_insensitive": True}
    assert one({**fields, "response_path": "result.items[0].label"}, sample, offline).score == 1
    assert one({**fields, "response_path": "result.items[1].label"}, sample, offline).score == 0


@pytest.mark.parametrize(
    ("output", "path", "error"),
    [
        ('{"answer": 1}', "result", "no key `result` (keys: answer)"),
        ('{"answer": [1]}', "answer[3]", "index [3] is past the end of `answer` (1 items)"),
        ('{"answer": {"a": 1}}', "answer", "leads to a mapping, not a value"),
        ("It is 42.", "answer", "the answer is not JSON"),
    ],
)
def test_response_path_that_finds_nothing_is_a_metric_error(
    offline: JudgeFactory, output: str, path: str, error: str
) -> None:
    result = one({"metric": "bleu", "response_path": path}, Sample("q", output, "42"), offline)
    assert result.status == "error" and error in (result.error or "")


def test_a_response_path_that_is_not_a_path_is_refused() -> None:
    with pytest.raises(ValidationError, match="is not a path"):
        METRIC.validate_python({"metric": "numeric", "response_path": "$.answer"})


def test_response_path_end_to_end_with_a_response_format(
    write: Write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the offline model answers the schema with {"answer": 0.0}
    body = """\
response_format:
  type: object
  required: [answer]
  properties: {answer: {type: number}}
evaluations:
  metrics:
    - {type: standard, metric: numeric, response_path: answer, absolute_tolerance: 0.5}
test_cases:
  - {name: near, input: How cold?, ground_truth: "0.4"}
  - {name: far, input: How cold?, ground_truth: "3"}
"""
    root = agent(write, body)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["test", str(root), "--model", "test", "-o", "r.json"])
    assert result.exit_code == 0, result.output  # an offline run: metrics are not judged
    report = json.loads(Path("r.json").read_text())
    scored = {c["name"]: c["runs"][0]["metrics"][0] for c in report["cases"]}
    assert {name: m["status"] for name, m in scored.items()} == {"near": "pass", "far": "fail"}
    assert not any(m["judged"] for m in scored.values())


# --- scale and AI thresholds ------------------------------------------------------------------


def test_scale_5_reports_ai_metrics_0_to_1(offline: JudgeFactory) -> None:
    sample = Sample("Weather?", "Sunny.")
    plain = one({"metric": "relevance", "threshold": 4}, sample, offline)
    per_unit = one({"metric": "relevance", "scale": 5, "threshold": 0.8}, sample, offline)
    assert (plain.score, plain.scale_max) == (5.0, 5.0)  # the offline judge gives the top
    assert (per_unit.score, per_unit.scale_max, per_unit.status) == (1.0, 1.0, "pass")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"metric": "bleu", "scale": 5}, "`scale` applies to the AI-judged metrics"),
        ({"metric": "coherence", "scale": 10}, "`scale: 10` is not offered"),
        ({"metric": "groundedness", "threshold": 0.8}, "add `scale: 5` to score 0-1"),
        ({"metric": "relevance", "scale": 5, "threshold": 4}, "write a threshold from 0 to 1"),
    ],
)
def test_scales_and_thresholds_that_cannot_work_are_refused(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(")):
        METRIC.validate_python(fields)


# --- include_reason ---------------------------------------------------------------------------


def test_include_reason_false_leaves_the_judges_reason_out(offline: JudgeFactory) -> None:
    sample = Sample("Weather?", "Sunny.", retrieval_context=["Sunny all day."])
    kept = one({"type": "rag", "metric_type": "faithfulness"}, sample, offline)
    dropped = one(
        {"type": "rag", "metric_type": "faithfulness", "include_reason": False}, sample, offline
    )
    assert kept.reason and dropped.reason is None and dropped.score == kept.score


# --- test_cases_file --------------------------------------------------------------------------

CASES = [
    {"name": "paris", "input": "Weather in Paris?", "ground_truth": "sunny"},
    {
        "name": "rome",
        "input": "Weather in\nRome?",
        "expected_tools": ["get_weather"],
        "retrieval_context": ["Rome: sunny"],
    },
]
CSV = (
    "name,input,ground_truth,expected_tools,retrieval_context\n"
    "paris,Weather in Paris?,sunny,,\n"
    'rome,"Weather in\nRome?",,get_weather,"[""Rome: sunny""]"\n'
)
FILES = {
    "cases.yaml": "- name: paris\n  input: Weather in Paris?\n  ground_truth: sunny\n"
    '- name: rome\n  input: "Weather in\\nRome?"\n  expected_tools: [get_weather]\n'
    "  retrieval_context: ['Rome: sunny']\n",
    "wrapped.yml": "test_cases:\n" + "".join(f"  - {json.dumps(c)}\n" for c in CASES),
    "cases.json": json.dumps(CASES, indent=2),
    "cases.jsonl": "\n".join(json.dumps(c) for c in CASES) + "\n\n",
    "cases.csv": CSV,
}


def cases_of(spec: AgentSpec) -> list[dict[str, Any]]:
    return [c.model_dump(exclude_defaults=True) for c in spec.test_cases]


@pytest.mark.parametrize("name", sorted(FILES))
def test_test_cases_file_loads_the_same_cases_as_inline(write: Write, name: str) -> None:
    inline = load_agent(
        agent(write, "test_cases:\n" + "".join(f"  - {json.dumps(c)}\n" for c in CASES))
    )
    root = agent(write, f"test_cases_file: data/{name}\n", **{f"data/{name}": FILES[name]})
    assert cases_of(load_agent(root)) == cases_of(inline)


@pytest.mark.parametrize(
    ("name", "text", "where", "message"),
    [
        (
            "cases.jsonl",
            '{"input": "a"}\n\n{"input": "b", "expected_tools": ["get_wether"]}\n',
            "cases.jsonl:3",
            "expected tool `get_wether` is not one of the agent's tools",
        ),
        ("cases.jsonl", '{"input": "a"}\n{"input": \n', "cases.jsonl:2", "invalid JSON"),
        (
            "cases.csv",
            'name,input\na,"two\nlines"\nb,\n',
            "cases.csv:4",
            "give either `input` or `turns`",
        ),
        ("cases.csv", "name,question\n", "cases.csv:1", "unknown column `question`"),
        (
            "cases.csv",
            'input,expected_tools\nhi,"[get_weather"\n',
            "cases.csv:2",
            "column `expected_tools`: invalid JSON",
        ),
        ("cases.yaml", "- input: a\n- input: b\n  bogus: 1\n", "cases.yaml:3", "`bogus`"),
        ("cases.json", '[{"input": "a"},\n {"name": "b"}]', "cases.json:2", "`input` or `turns`"),
    ],
)
def test_a_bad_case_is_reported_at_its_file_and_line(
    write: Write, name: str, text: str, where: str, message: str
) -> None:
    rendered = refused(agent(write, f"test_cases_file: {name}\n", **{name: text}))
    assert where in rendered and message in rendered, rendered


def test_test_cases_and_test_cases_file_together_are_refused(write: Write) -> None:
    body = "test_cases_file: cases.jsonl\ntest_cases: [{input: hi}]\n"
    message = refused(agent(write, body, **{"cases.jsonl": '{"input": "a"}\n'}))
    assert "give `test_cases` or `test_cases_file`, not both" in message
    assert "move the inline cases into cases.jsonl" in message


def test_a_missing_or_unreadable_kind_of_file_is_refused(write: Write) -> None:
    assert "test cases file not found" in refused(agent(write, "test_cases_file: none.yaml\n"))
    message = refused(agent(write, "test_cases_file: cases.txt\n", **{"cases.txt": "hi"}))
    assert "cannot read test cases from a `.txt` file" in message
    assert ".yaml, .yml, .json, .jsonl, .csv" in message


def test_file_paths_in_a_cases_file_are_relative_to_agent_yaml(write: Write) -> None:
    files = {"data/cases.csv": "input,files\nDescribe it,notes.txt\n", "notes.txt": "a note"}
    spec = load_agent(agent(write, "test_cases_file: data/cases.csv\n", **files))
    (case,) = spec.test_cases
    assert case.files is not None and case.files[0].path == "notes.txt"
    missing = refused(
        agent(
            write,
            "test_cases_file: data/cases.csv\n",
            **{"data/cases.csv": files["data/cases.csv"]},
        )
    )
    assert "cases.csv:2" in missing and "file not found" in missing


def test_env_references_in_a_cases_file_are_expanded(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITY", "Lyon")
    spec = load_agent(
        agent(
            write, "test_cases_file: c.jsonl\n", **{"c.jsonl": '{"input": "Weather in ${CITY}?"}\n'}
        )
    )
    assert spec.test_cases[0].input == "Weather in Lyon?"


def test_an_earlier_releases_evaluations_block_loads_as_written(write: Write) -> None:
    body = """\
evaluations:
  model: {provider: test, temperature: 0.0}
  metrics:
    - {type: rag, metric_type: faithfulness, threshold: 0.8, include_reason: true}
    - {type: rag, metric_type: answer_relevancy, threshold: 0.75}
    - type: geval
      name: Helpfulness
      criteria: Does the answer help?
      evaluation_steps: [Is the question answered?]
      evaluation_params: [input, actual_output]
      threshold: 0.8
    - {type: standard, metric: f1_score, threshold: 0.7}
    - {metric: relevance, scale: 5, threshold: 0.75, enabled: true}
    - rouge
test_cases:
  - name: Weather - Paris
    input: Weather in Paris?
    ground_truth: Sunny in Paris
    expected_tools: [get_weather]
    evaluations: [bleu, {type: standard, metric: equality, strip_whitespace: true}]
"""
    spec = load_agent(agent(write, body))
    assert spec.evaluations is not None and len(spec.evaluations.metrics) == 6
    (case,) = spec.test_cases
    assert case.evaluations is not None
    assert [getattr(m, "metric", None) for m in case.evaluations] == ["bleu", "equality"]


def test_holodeck_test_runs_the_cases_of_the_file(
    write: Write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = agent(write, "test_cases_file: cases.csv\n", **{"cases.csv": CSV})
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["test", str(root), "--model", "test", "-o", "r.json"])
    assert result.exit_code == 0, result.output
    report = json.loads(Path("r.json").read_text())
    assert [c["name"] for c in report["cases"]] == ["paris", "rome"]


def test_a_cases_file_that_is_not_a_list_is_refused_and_an_empty_one_has_no_cases(
    write: Write,
) -> None:
    message = refused(agent(write, "test_cases_file: c.yaml\n", **{"c.yaml": "just text\n"}))
    assert "c.yaml:1" in message and "a test cases file holds a list of test cases" in message
    spec = load_agent(agent(write, "test_cases_file: c.yaml\n", **{"c.yaml": "# none yet\n"}))
    assert spec.test_cases == ()
