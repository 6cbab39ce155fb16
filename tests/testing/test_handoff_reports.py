"""`holodeck test` of a triage agent that hands a case's conversation to billing and
back (offline `test` model): `expected_tools` checks the transfer calls like any other,
and every report format shows each turn's handoffs and the agent that answered."""

from __future__ import annotations

import json
from pathlib import Path

from cli_invoke import invoke
from conftest import Write
from handoff_desks import desk_files
from holodeck.testing.reports import render_report
from holodeck.testing.results import TestRun


def test_reports_show_each_turn_s_handoffs_and_who_answered(write: Write, tmp_path: Path) -> None:
    root = write(desk_files())
    report = tmp_path / "report.json"
    result = invoke("test", str(root), "--model", "test", "-v", "-o", str(report), cwd=tmp_path)
    assert result.exit_code == 0, result.output
    # the console: each handoff under its turn, the answer under the agent that wrote it
    assert "handoff: billing takes over from triage" in result.output
    assert "billing: invoice 7: 42 EUR, paid" in result.output
    assert "handoff: back to triage" in result.output

    saved = json.loads(report.read_text(encoding="utf-8"))
    (case,) = saved["cases"]
    first, second = case["runs"][0]["turns"]
    assert [c["name"] for c in first["tool_calls"]] == ["transfer_to_billing", "lookup_invoice"]
    assert first["handoffs"] == [
        {"from_agent": "triage", "to_agent": "billing", "reason": None, "back": False}
    ]
    assert first["agent"] == "billing"
    assert [c["name"] for c in second["tool_calls"]] == ["transfer_back_to_triage"]
    assert second["handoffs"][0]["back"] is True and second["agent"] == ""
    assert case["runs"][0]["tool_check"]["passed"] is True
    # nothing a transfer returned is taken for retrieval context
    assert case["runs"][0]["retrieval_context"] == ["invoice 7: 42 EUR, paid"]

    run = TestRun.model_validate(saved)
    markdown = render_report(run, "markdown")
    assert "Handoff: billing takes over from triage" in markdown
    assert "Agent (billing):" in markdown
    assert "Handoff: back to triage" in markdown
    junit = render_report(run, "junit")
    assert "handoff: billing takes over from triage" in junit
    assert "billing: invoice 7: 42 EUR, paid" in junit
    html = render_report(run, "html")
    assert "⇄ billing takes over from triage" in html
    assert "Agent · billing" in html
