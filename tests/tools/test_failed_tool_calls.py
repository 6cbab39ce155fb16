"""A failed tool call is not a made call: it meets `expected_tools` only with
`allow_error: true`, every report shows each case's failed calls, and a tool none of whose
calls succeeded is named in the run's summary in every format."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import Write
from test_offline_runs import holodeck, report

AGENT = """
name: finance
model: {provider: test}
instructions: {inline: Answer from the filings.}
tools:
  - {type: function, name: search, file: tools.py, function: search}
  - {type: function, name: quote, file: tools.py, function: quote}
test_cases:
  - name: revenue
    input: What was the revenue in 2023?
    expected_tools: [search, quote]
  - name: outage
    input: Is the index down?
    expected_tools: [{name: search, allow_error: true}]
"""
TOOLS = """
def search(query: str) -> str:
    raise ConnectionError("vector database at 127.0.0.1:6333 refused the connection")

def quote(symbol: str) -> str:
    return "ACME 12.5"
"""
REFUSED = "ConnectionError: vector database at 127.0.0.1:6333 refused the connection"
SUMMARY = f"search: all 2 calls failed: {REFUSED}"


def test_failed_calls_do_not_meet_an_expectation_and_every_report_says_so(
    write: Write, tmp_path: Path
) -> None:
    root = write({"agent.yaml": AGENT, "tools.py": TOOLS})
    for name in ("r.json", "r.md", "r.html", "r.junit.xml"):
        ran = holodeck("test", str(root), "-o", name, cwd=tmp_path)
        assert ran.returncode == 1, ran.stdout + ran.stderr  # `revenue` fails
        assert f"only failed calls: search: its only call failed: {REFUSED}" in ran.stdout
        assert f"1 failed tool call: search: {REFUSED}" in ran.stdout
        assert ran.stdout.count(SUMMARY) == 1  # under the totals line
        assert "quote: its only call failed" not in ran.stdout  # quote's calls succeeded
    data = report(tmp_path)
    revenue, outage = data["cases"]
    assert (revenue["status"], outage["status"]) == ("fail", "pass")  # allow_error: it counts
    (attempt,) = revenue["runs"]
    assert attempt["tool_check"]["failed"] == [f"search: its only call failed: {REFUSED}"]
    assert attempt["tool_check"]["missing"] == []  # it was called: it failed
    assert [r["failed_calls"] for c in data["cases"] for r in c["runs"]] == [1, 1]
    assert data["summary"]["failing_tools"] == [SUMMARY]

    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert f"> **Tool failing**: {SUMMARY}" in markdown
    assert markdown.count(f"**Failed tool calls**: 1 failed tool call: search: {REFUSED}") == 2
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert f"<strong>Tool failing.</strong> {SUMMARY}" in html
    assert html.count('<span class="chip fail">1 failed call</span>') == 2
    assert "only failed calls: search: its only call failed" in html
    suite = ET.parse(tmp_path / "r.junit.xml").getroot().find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["failing_tools"] == SUMMARY
    assert properties["outage :: failed_calls"] == f"1 failed tool call: search: {REFUSED}"
    outage_case = next(c for c in suite.iter("testcase") if c.get("name") == "outage")
    assert f"1 failed tool call: search: {REFUSED}" in (outage_case.findtext("system-out") or "")


def test_a_run_whose_tool_works_names_no_failing_tool(write: Write, tmp_path: Path) -> None:
    root = write(
        {"agent.yaml": AGENT, "tools.py": TOOLS.replace("raise ConnectionError", "return")}
    )
    ran = holodeck("test", str(root), "-o", "r.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "failed tool call" not in ran.stdout and "calls failed" not in ran.stdout
    data = report(tmp_path)
    assert data["summary"]["failing_tools"] == []
    assert [r["failed_calls"] for c in data["cases"] for r in c["runs"]] == [0, 0]
