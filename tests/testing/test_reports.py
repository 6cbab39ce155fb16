"""Reports of a test run: console, JSON, Markdown, JUnit XML (checked against the JUnit XSD)
and the self-contained HTML page (checked in headless Chromium)."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest
from rich.console import Console

from browser import chromium_page, playwright_api
from holodeck.testing.reports import (
    FORMATS,
    ReportFormatError,
    format_for,
    render_report,
    write_report,
)
from holodeck.testing.reports.console import render_case, render_console, render_summary
from holodeck.testing.results import (
    ArgMismatch,
    CaseResult,
    CaseRun,
    MetricResult,
    RunSummary,
    TestRun,
    ToolCallRecord,
    ToolCheck,
    TurnRecord,
)

DATA = Path(__file__).parents[1] / "data"
HOSTILE = (
    '<script>document.title="pwned"</script><img src="https://cdn.example.com/x.png">'
    " **bold** | pipe [red]markup[/red] ]]> & done \x1b[31m"
)


def _groundedness(score: float, status: str = "pass", reason: str = "") -> MetricResult:
    return MetricResult(
        name="groundedness",
        kind="ai",
        score=score,
        threshold=3.5,
        scale_max=5.0,
        status=status,
        reason=reason or "Every claim is supported by the retrieved context.",
        judge_prompt="You are grading groundedness.\nContext: ...\nAnswer: ...\nScore 1-5.",
        duration_ms=812.0,
    )


def sample_run() -> TestRun:
    """A run with one case of every kind a report must show."""
    weather = CaseResult(
        name="weather-paris",
        input="What's the weather in Paris?",
        ground_truth="It is 18°C and cloudy in Paris.",
        status="pass",
        pass_rate=1.0,
        runs=[
            CaseRun(
                status="pass",
                duration_ms=1240.0,
                turns=[
                    TurnRecord(
                        input="What's the weather in Paris?",
                        output="It's 18°C and cloudy in Paris right now.",
                        tool_calls=[
                            ToolCallRecord(
                                name="get_weather",
                                args={"city": "Paris", "units": "metric"},
                                result={"temp_c": 18, "conditions": "cloudy"},
                                duration_ms=95.0,
                            )
                        ],
                        input_tokens=412,
                        output_tokens=38,
                        duration_ms=1240.0,
                    )
                ],
                tool_check=ToolCheck(passed=True),
                metrics=[
                    _groundedness(4.2),
                    MetricResult(name="bleu", kind="nlp", score=0.41, threshold=0.3, status="pass"),
                ],
                retrieval_context=["Paris: 18°C, cloudy, wind 12 km/h"],
            )
        ],
    )
    refund = CaseResult(
        name="refund-policy",
        input="How long do I have to return an item?",
        ground_truth="30 days from delivery.",
        status="fail",
        pass_rate=0.0,
        runs=[
            CaseRun(
                status="fail",
                duration_ms=2310.0,
                turns=[
                    TurnRecord(
                        input="How long do I have to return an item?",
                        output="You can return any item within 60 days.",
                        tool_calls=[
                            ToolCallRecord(
                                name="search_kb",
                                args={"query": "return window"},
                                result=[{"doc": "returns.md", "text": "Returns within 30 days."}],
                                duration_ms=140.0,
                            )
                        ],
                        input_tokens=530,
                        output_tokens=22,
                        duration_ms=2310.0,
                    )
                ],
                tool_check=ToolCheck(passed=True),
                metrics=[
                    _groundedness(
                        2.1,
                        "fail",
                        "The answer says 60 days; the knowledge base says 30 days.",
                    ),
                    MetricResult(
                        name="rouge", kind="nlp", score=0.12, threshold=0.3, status="fail"
                    ),
                ],
            )
        ],
    )
    booking = CaseResult(
        name="book-flight",
        input="Book me a flight to Paris next Friday",
        status="fail",
        pass_rate=0.0,
        runs=[
            CaseRun(
                status="fail",
                duration_ms=3050.0,
                turns=[
                    TurnRecord(
                        input="Book me a flight to Paris next Friday",
                        output="Which airport are you flying from?",
                        tool_calls=[
                            ToolCallRecord(
                                name="search_flights",
                                args={"destination": "London", "date": "2025-06-13"},
                                result={"flights": []},
                                duration_ms=300.0,
                            ),
                            ToolCallRecord(
                                name="delete_account",
                                args={"user": "me"},
                                error="PermissionError: not allowed in tests",
                                duration_ms=4.0,
                                agent="account-helper",
                            ),
                        ],
                        input_tokens=600,
                        output_tokens=40,
                        duration_ms=1800.0,
                    ),
                    TurnRecord(
                        input="From Berlin",
                        output="I found no flights from Berlin to London on that day.",
                        tool_calls=[
                            ToolCallRecord(
                                name="search_flights",
                                args={"destination": "London", "origin": "BER"},
                                result={"flights": []},
                                duration_ms=250.0,
                            ),
                            ToolCallRecord(
                                name="search_flights",
                                args={"destination": "London", "origin": "TXL"},
                                result={"flights": []},
                                duration_ms=240.0,
                            ),
                        ],
                        input_tokens=720,
                        output_tokens=35,
                        duration_ms=1250.0,
                    ),
                ],
                tool_check=ToolCheck(
                    passed=False,
                    order="in_order",
                    missing=["confirm_booking"],
                    unexpected=["delete_account"],
                    mismatched=[
                        ArgMismatch(
                            tool="search_flights",
                            argument="destination",
                            expected="regex ^Par",
                            actual="London",
                        )
                    ],
                    wrong_count=["search_flights: 3 calls, expected 1"],
                    out_of_order=True,
                ),
            )
        ],
    )
    provider_down = CaseResult(
        name="provider-down",
        input="Hello?",
        status="error",
        pass_rate=0.0,
        runs=[
            CaseRun(
                status="error",
                error="openai: 503 Service Unavailable (after 3 retries)",
                duration_ms=15020.0,
            )
        ],
    )
    tone_runs = []
    for attempt, (score, status) in enumerate(
        [(4.5, "pass"), (2.9, "fail"), (4.1, "pass")], start=1
    ):
        tone_runs.append(
            CaseRun(
                attempt=attempt,
                status=status,
                duration_ms=900.0 + attempt,
                turns=[
                    TurnRecord(
                        input="My order is late and I'm furious.",
                        output="I'm sorry about the delay. Let me check your order.",
                        input_tokens=300,
                        output_tokens=25,
                        duration_ms=900.0,
                    )
                ],
                metrics=[
                    MetricResult(
                        name="Professionalism",
                        kind="geval",
                        score=score,
                        threshold=3.0,
                        scale_max=5.0,
                        status=status,
                        reason="Polite and calm." if status == "pass" else "Dismissive tone.",
                    )
                ],
            )
        )
    tone = CaseResult(
        name="tone-check",
        input="My order is late and I'm furious.",
        status="fail",
        pass_rate=2 / 3,
        flaky=True,
        score_spread={"Professionalism": (2.9, 4.5)},
        runs=tone_runs,
    )
    judge_down = CaseResult(
        name="judge-unavailable",
        input="Summarise our returns policy.",
        status="error",
        pass_rate=0.0,
        runs=[
            CaseRun(
                status="error",
                duration_ms=31000.0,
                turns=[
                    TurnRecord(
                        input="Summarise our returns policy.",
                        output="Items can be returned within 30 days.",
                        input_tokens=200,
                        output_tokens=12,
                        duration_ms=700.0,
                    )
                ],
                metrics=[
                    MetricResult(
                        name="relevance",
                        kind="ai",
                        scale_max=5.0,
                        threshold=3.0,
                        status="error",
                        error="judge model timed out after 30s",
                    ),
                    MetricResult(
                        name="faithfulness",
                        kind="rag",
                        threshold=0.7,
                        status="error",
                        error="no retrieval context",
                        fails_case=False,
                    ),
                ],
            )
        ],
    )
    html_case = CaseResult(
        name="html-<echo>",
        input=f"Repeat exactly: {HOSTILE}",
        status="pass",
        pass_rate=1.0,
        runs=[
            CaseRun(
                status="pass",
                duration_ms=640.0,
                turns=[
                    TurnRecord(
                        input=f"Repeat exactly: {HOSTILE}",
                        output=HOSTILE,
                        tool_calls=[
                            ToolCallRecord(
                                name="echo",
                                args={"text": HOSTILE},
                                result='<a href="https://evil.example/">click</a>',
                                duration_ms=1.0,
                            )
                        ],
                        input_tokens=90,
                        output_tokens=60,
                        duration_ms=640.0,
                    )
                ],
                metrics=[
                    MetricResult(
                        name="exact_match",
                        kind="code",
                        score=1.0,
                        threshold=1.0,
                        status="pass",
                        reason="<b>identical</b>",
                    )
                ],
            )
        ],
    )
    cases = [weather, refund, booking, provider_down, tone, judge_down, html_case]
    return TestRun(
        run_id="20250601T120000-a1b2c3",
        agent="support-agent",
        source="examples/support/agent.yaml",
        model="openai/gpt-4o-mini",
        started_at=datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC),
        concurrency=4,
        repeat=1,
        cases=cases,
        summary=RunSummary(
            total=7,
            passed=2,
            failed=3,
            errors=2,
            flaky=1,
            duration_ms=sum(r.duration_ms for c in cases for r in c.runs),
            input_tokens=sum(r.input_tokens for c in cases for r in c.runs),
            output_tokens=sum(r.output_tokens for c in cases for r in c.runs),
        ),
    )


def _console(*, terminal: bool = False, width: int = 120) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    if terminal:
        return Console(file=out, width=width, force_terminal=True, color_system="standard"), out
    return Console(file=out, width=width), out  # what the CLI gets when piped


def _without_fences(markdown: str) -> str:
    """Markdown with its fenced code blocks removed (their content is shown literally)."""
    kept, fence = [], None
    for line in markdown.splitlines():
        match = re.match(r"^(`{3,})", line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            kept.append(line)
    assert fence is None, "unclosed code fence"
    return "\n".join(kept)


# --- console ------------------------------------------------------------------------------


def test_console_shows_status_scores_tool_mismatches_errors_timing_and_summary() -> None:
    console, out = _console()
    render_console(sample_run(), console, verbose=False)
    text = out.getvalue()

    assert "\x1b" not in text  # not a terminal: plain text
    for line in [
        "PASS  weather-paris",
        "FAIL  refund-policy",
        "FAIL  book-flight",
        "ERROR provider-down",
        "Groundedness: 4.2/5.0 ✓ (threshold 3.5)",
        "BLEU: 0.41 ✓ (threshold 0.30)",
        "Groundedness: 2.1/5.0 ✗ (threshold 3.5)",
        "reason: The answer says 60 days; the knowledge base says 30 days.",
        "ROUGE: 0.12 ✗ (threshold 0.30)",
        "Relevance: ERROR (judge model timed out after 30s)",
        "Faithfulness: ERROR (no retrieval context) [does not fail the case]",
        "missing: confirm_booking",
        "unexpected: delete_account",
        'wrong argument search_flights.destination: expected regex ^Par, got "London"',
        "wrong count: search_flights: 3 calls, expected 1",
        "out of order: expected the calls in order",
        "error: openai: 503 Service Unavailable (after 3 retries)",
        "2/3 runs passed, flaky",
        "attempt 2/3: FAIL",
        "Professionalism: 2.9/5.0 ✗ (threshold 3.0)",
        "spread: Professionalism: 2.90 to 4.50 over 3 runs",
        "1.24s",
        "tokens 412 in / 38 out",
        "7 cases, 2 passed, 3 failed, 2 errors, 1 flaky in 55.97s; tokens 3,452 in / 282 out",
    ]:
        assert line in text, line
    # the summary table has a row per case
    table = text[text.index("Case ") :]
    for case in sample_run().cases:
        assert re.search(rf"^{re.escape(case.name)}\s", table, re.M), case.name
    # no trailing padding on the lines this module prints itself
    body = text.split("\n\n")[0]  # the cases, before the table
    assert all(line == line.rstrip() for line in body.splitlines())
    # details stay out of the non-verbose view
    assert "judge prompt" not in text
    assert "Every claim is supported" not in text  # a passing metric's reason
    assert "user:" not in text


def test_verbose_console_adds_conversation_tool_results_judge_prompts_and_reasons() -> None:
    console, out = _console()
    render_console(sample_run(), console, verbose=True)
    text = out.getvalue()

    assert "user: What's the weather in Paris?" in text
    assert "agent: It's 18°C and cloudy in Paris right now." in text
    assert "tool get_weather 95ms" in text
    assert '"temp_c": 18' in text  # the full tool result
    assert "tool delete_account (sub-agent account-helper) 4ms" in text
    assert "error: PermissionError: not allowed in tests" in text
    assert "judge prompt:" in text and "You are grading groundedness." in text
    assert "reason: Every claim is supported by the retrieved context." in text
    assert "turn 2 (1.25s, tokens 720 in / 35 out):" in text
    assert "- Paris: 18°C, cloudy, wind 12 km/h" in text  # retrieval context
    for attempt in ("attempt 1/3: PASS", "attempt 2/3: FAIL", "attempt 3/3: PASS"):
        assert attempt in text


def test_console_shows_outputs_literally_never_as_markup_or_terminal_codes() -> None:
    for terminal in (False, True):
        console, out = _console(terminal=terminal)
        render_case(sample_run().cases[-1], console, True)
        text = out.getvalue()
        assert "[red]markup[/red]" in text  # not read as rich markup
        assert "\\x1b[31m" in text  # the agent's escape sequence is shown, not sent
        assert "done \x1b[31m" not in text
        if terminal:
            assert "\x1b[" in text  # our own colours do reach a terminal


def test_render_case_prints_one_case_as_the_runner_finishes_it() -> None:
    console, out = _console()
    render_case(sample_run().cases[2], console)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("FAIL  book-flight  (3.05s, 2 turns, tokens 1,320 in / 75 out)")
    assert "  Tools: ✗" in lines
    assert all("weather-paris" not in line for line in lines)


def test_render_summary_marks_an_interrupted_run() -> None:
    run = sample_run()
    run.interrupted = True
    console, out = _console()
    render_summary(run, console)
    assert "Interrupted: results are partial." in out.getvalue()


def test_console_without_utf8_uses_ascii_marks_and_table() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    console = Console(file=stream, width=120, force_terminal=False)
    render_console(sample_run(), console, verbose=False)
    stream.flush()
    text = raw.getvalue().decode("ascii")  # would fail on any non-ASCII mark or border
    assert "Groundedness: 4.2/5.0 ok (threshold 3.5)" in text
    assert "Groundedness: 2.1/5.0 x (threshold 3.5)" in text


def test_scores_print_with_enough_decimals_to_tell_them_from_thresholds() -> None:
    from holodeck.testing.reports._format import metric_line

    def line(score: float, threshold: float, status: str, scale: float = 5.0) -> str:
        metric = MetricResult(
            name="groundedness",
            kind="ai",
            score=score,
            threshold=threshold,
            scale_max=scale,
            status=status,
        )
        return metric_line(metric)

    assert line(4.2, 3.5, "pass") == "Groundedness: 4.2/5.0 ✓ (threshold 3.5)"
    assert line(3.46, 3.5, "fail") == "Groundedness: 3.46/5.0 ✗ (threshold 3.50)"
    assert line(4.0, 3.75, "pass") == "Groundedness: 4.00/5.0 ✓ (threshold 3.75)"
    assert line(0.4123, 0.3, "pass", 1.0) == "Groundedness: 0.41 ✓ (threshold 0.30)"


# --- report files -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("run.json", "json"),
        ("run.md", "markdown"),
        ("run.xml", "junit"),
        ("results.junit.xml", "junit"),
        ("REPORT.HTML", "html"),
    ],
)
def test_format_comes_from_the_extension(name: str, fmt: str) -> None:
    assert format_for(Path(name)) == fmt


def test_unknown_extension_or_format_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReportFormatError) as caught:
        write_report(sample_run(), tmp_path / "report.pdf")
    message = str(caught.value)
    assert "report.pdf" in message
    for fmt in FORMATS:
        assert fmt in message
    assert ".junit.xml" in message
    assert not (tmp_path / "report.pdf").exists()
    with pytest.raises(ReportFormatError, match="choose one of: json, markdown, junit, html"):
        write_report(sample_run(), tmp_path / "report.txt", "pdf")


def test_an_explicit_format_wins_over_the_extension(tmp_path: Path) -> None:
    path = write_report(sample_run(), tmp_path / "nested" / "out.txt", "junit")
    assert path == tmp_path / "nested" / "out.txt"
    assert ET.parse(path).getroot().tag == "testsuites"


def test_json_report_loads_back_into_the_same_run(tmp_path: Path) -> None:
    run = sample_run()
    path = write_report(run, tmp_path / "run.json")
    assert TestRun.model_validate_json(path.read_text("utf-8")) == run
    assert json.loads(path.read_text("utf-8"))["summary"]["failed"] == 3


def test_markdown_report_has_a_summary_table_and_a_section_per_case(tmp_path: Path) -> None:
    run = sample_run()
    run.cases[0].runs[0].turns[0].output = "```python\nprint('hi')\n```"
    text = write_report(run, tmp_path / "run.md").read_text("utf-8")

    assert text.startswith("# Test report: support-agent\n")
    assert "| **2/7 passed** (29%): 3 failed, 2 errors, 1 flaky |" in text
    assert "| Case | Status | Runs passed | Metrics | Tools | Time | Tokens |" in text
    assert "| refund\\-policy" not in text  # names are not over-escaped
    assert "| refund-policy | **FAIL** | 0/1 | Groundedness: 2.1/5.0 ✗ (threshold 3.5)" in text
    for case in run.cases:
        heading = f"### {case.status.upper()}: " + case.name.replace("<", "&lt;").replace(
            ">", "&gt;"
        )
        assert heading in text, heading
    assert "| Groundedness | 2.1/5.0 | 3.5 | ✗ fail | The answer says 60 days" in text
    assert "| Relevance | - | 3.0 | ERROR | judge model timed out after 30s |" in text
    assert "- wrong argument search\\_flights.destination: expected regex ^Par" in text
    assert "#### Attempt 2: FAIL" in text
    assert "````text\n```python" in text  # a longer fence around an output with a fence
    # outside code blocks, nothing the agent wrote can become HTML or Markdown structure
    prose = _without_fences(text)
    assert "<script" not in prose and "<img" not in prose and "<b>" not in prose
    assert "&lt;b&gt;identical&lt;/b&gt;" in prose


def test_junit_report_is_valid_against_the_junit_schema(tmp_path: Path) -> None:
    etree = pytest.importorskip("lxml.etree")
    schema = etree.XMLSchema(etree.parse(str(DATA / "junit.xsd")))
    path = write_report(sample_run(), tmp_path / "results.junit.xml")
    document = etree.parse(str(path))
    assert schema.validate(document), schema.error_log

    root = ET.parse(path).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("7", "3", "2")
    suite = root.find("testsuite")
    assert suite is not None and suite.get("time") == "55.966"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == [c.name for c in sample_run().cases]
    assert cases["weather-paris"].find("failure") is None
    assert cases["weather-paris"].get("time") == "1.240"
    failure = cases["refund-policy"].find("failure")
    assert failure is not None and failure.get("type") == "MetricFailure"
    assert "Groundedness: 2.1/5.0 ✗ (threshold 3.5)" in (failure.get("message") or "")
    assert "the knowledge base says 30 days" in (failure.text or "")
    tools = cases["book-flight"].find("failure")
    assert tools is not None and tools.get("type") == "ToolMismatch"
    assert "missing: confirm_booking" in (tools.text or "")
    error = cases["provider-down"].find("error")
    assert error is not None and "503 Service Unavailable" in (error.get("message") or "")
    judge = cases["judge-unavailable"].find("error")
    assert judge is not None and judge.get("type") == "MetricError"
    flaky = cases["tone-check"].find("failure")
    assert flaky is not None and (flaky.get("message") or "").startswith("2/3 runs passed (flaky)")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["model"] == "openai/gpt-4o-mini"
    assert properties["refund-policy :: groundedness"] == "Groundedness: 2.1/5.0 ✗ (threshold 3.5)"
    assert (properties["tone-check :: attempt 2 :: Professionalism"] or "").startswith(
        "Professionalism: 2.9/5.0 ✗"
    )
    # the agent's output survives as text; the one character XML cannot carry is replaced
    echo = cases["html-<echo>"].find("system-out")
    assert echo is not None
    assert HOSTILE.replace("\x1b", "\ufffd") in (echo.text or "")


def test_the_junit_schema_rejects_what_ci_systems_reject() -> None:
    """The schema used above is strict enough to catch real mistakes."""
    etree = pytest.importorskip("lxml.etree")
    schema = etree.XMLSchema(etree.parse(str(DATA / "junit.xsd")))
    bad = [
        # properties inside a testcase
        '<testsuites><testsuite name="s" tests="1" failures="0" errors="0">'
        '<testcase name="c"><properties/></testcase></testsuite></testsuites>',
        # failure after system-out
        '<testsuites><testsuite name="s" tests="1" failures="1" errors="0">'
        '<testcase name="c"><system-out>x</system-out><failure/></testcase>'
        "</testsuite></testsuites>",
        # a suite without its counts
        '<testsuites><testsuite name="s"><testcase name="c"/></testsuite></testsuites>',
        # a time that is not a number of seconds
        '<testsuites><testsuite name="s" tests="1" failures="0" errors="0">'
        '<testcase name="c" time="1.2s"/></testsuite></testsuites>',
    ]
    for text in bad:
        assert not schema.validate(etree.fromstring(text)), text


def test_every_format_handles_an_empty_interrupted_run(tmp_path: Path) -> None:
    run = sample_run()
    run.cases = []
    run.interrupted = True
    run.summary = run.summary.model_copy(
        update={"total": 0, "passed": 0, "failed": 0, "errors": 0, "flaky": 0}
    )
    for fmt in FORMATS:
        text = render_report(run, fmt)
        assert "support-agent" in text
    assert "Interrupted" in render_report(run, "markdown")
    assert "Interrupted" in render_report(run, "html")
    etree = pytest.importorskip("lxml.etree")
    schema = etree.XMLSchema(etree.parse(str(DATA / "junit.xsd")))
    assert schema.validate(etree.fromstring(render_report(run, "junit").encode()))
    console, out = _console()
    render_console(run, console)
    assert "0 cases, 0 passed" in out.getvalue()


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_html_report_is_one_self_contained_escaped_file(tmp_path: Path) -> None:
    path = write_report(sample_run(), tmp_path / "report.html")
    text = path.read_text("utf-8")
    parser = _Tags()
    parser.feed(text)
    names = [tag for tag, _ in parser.tags]

    assert names.count("script") == 1 and names.count("style") == 1
    assert not {"img", "link", "iframe", "object", "embed", "a"} & set(names)
    for _, attrs in parser.tags:
        for key in ("src", "href"):
            assert key not in attrs
    assert "url(" not in text and "@import" not in text and "@font-face" not in text
    # what the agent wrote is there, as text
    assert "&lt;script&gt;document.title=" in text
    assert "&lt;b&gt;identical&lt;/b&gt;" in text
    assert "\\x1b[31m" in text
    assert (
        len([t for t in parser.tags if t[0] == "details" and "case" in (t[1].get("class") or "")])
        == 7
    )


@pytest.mark.slow
def test_html_report_in_headless_chromium(tmp_path: Path) -> None:
    sync_api = playwright_api()
    path = write_report(sample_run(), tmp_path / "report.html")

    with chromium_page(sync_api, lambda url: url.startswith("file:"), 1280, 900) as (
        page,
        problems,
    ):
        page.goto(path.as_uri())
        assert page.title() == "support-agent · test report"

        cases = page.locator("details.case")
        assert cases.count() == 7
        failed = page.locator("details.case", has_text="book-flight")
        call = failed.locator(".call", has_text="delete_account")
        assert not call.is_visible()
        failed.locator("> summary").click()
        sync_api.expect(call).to_be_visible()
        sync_api.expect(call).to_contain_text("PermissionError: not allowed in tests")
        sync_api.expect(failed.locator(".mismatch")).to_contain_text("regex ^Par")

        refund = page.locator("details.case", has_text="refund-policy")
        refund.locator("> summary").click()
        reason = refund.locator(".reason", has_text="knowledge base says 30 days")
        sync_api.expect(reason).to_be_visible()
        prompt = refund.locator(".prompt pre")
        assert not prompt.is_visible()
        refund.locator(".prompt summary").click()
        sync_api.expect(prompt).to_contain_text("You are grading groundedness.")

        # filters
        page.get_by_role("button", name=re.compile("^Failed")).click()
        sync_api.expect(page.locator("details.case:visible")).to_have_count(5)
        page.get_by_role("button", name=re.compile("^Flaky")).click()
        sync_api.expect(page.locator("details.case:visible")).to_have_count(1)
        sync_api.expect(page.locator("details.case:visible")).to_contain_text("tone-check")
        page.get_by_role("button", name=re.compile("^All")).click()
        sync_api.expect(page.locator("details.case:visible")).to_have_count(7)
        page.locator("#search").fill("weather")
        sync_api.expect(page.locator("details.case:visible")).to_have_count(1)
        page.locator("#search").fill("")

        # a repeated case opens on the failing attempt; the other attempts are tabs
        tone = page.locator("details.case", has_text="tone-check")
        tone.locator("> summary").click()
        sync_api.expect(tone.locator(".attempt:visible")).to_contain_text("Dismissive tone.")
        tone.get_by_role("tab", name="Attempt 1").click()
        sync_api.expect(tone.locator(".attempt:visible")).to_contain_text("Polite and calm.")

        # the hostile case shows its markup as text and ran none of it
        echo = page.locator("details.case", has_text="html-<echo>")
        echo.locator("> summary").click()
        sync_api.expect(echo.locator(".msg.agent pre")).to_contain_text(
            '<script>document.title="pwned"</script>'
        )
        assert page.title() == "support-agent · test report"

        failed.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        assert (tmp_path / "report.png").stat().st_size > 10_000
        assert problems == []


def test_reports_name_the_agent_relative_to_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run saved from a project names its agent as the project sees it, not by the
    folders of the machine it ran on."""
    project = tmp_path / "project"
    (project / "agents" / "shop").mkdir(parents=True)
    source = project / "agents" / "shop" / "agent.yaml"
    run = sample_run().model_copy(update={"source": str(source)})
    monkeypatch.chdir(project)
    for fmt in ("markdown", "html", "junit"):
        text = render_report(run, fmt)
        assert "agents/shop/agent.yaml" in text, fmt
        assert str(tmp_path) not in text, fmt
