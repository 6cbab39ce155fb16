"""examples/triage-handoff runs offline as its README says: `holodeck test
examples/triage-handoff --model test` hands the conversation to billing (which looks the
invoice up) and back, every expected call is made, and the report shows both handoffs."""

from __future__ import annotations

import json
from pathlib import Path

from cli_invoke import invoke

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "triage-handoff"


def test_the_triage_example_hands_over_and_back_offline(tmp_path: Path) -> None:
    report = tmp_path / "run.json"
    result = invoke("test", str(EXAMPLE), "--model", "test", "-v", "-o", str(report), cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "handoff: billing takes over from triage" in result.output
    assert "handoff: back to triage" in result.output

    run = json.loads(report.read_text(encoding="utf-8"))
    cases = {c["name"]: c for c in run["cases"]}
    assert {name: c["status"] for name, c in cases.items()} == {
        "billing-and-back": "pass",
        "stays-at-the-front-desk": "pass",
    }
    first, second = cases["billing-and-back"]["runs"][0]["turns"]
    assert [c["name"] for c in first["tool_calls"]] == ["transfer_to_billing", "lookup_invoice"]
    assert first["tool_calls"][1]["result"].startswith("Invoice INV-1042: 89.00 EUR")
    assert first["agent"] == "billing" and "INV-1042" in first["output"]
    assert [(h["from_agent"], h["to_agent"]) for h in first["handoffs"]] == [("triage", "billing")]
    assert [(h["to_agent"], h["back"]) for h in second["handoffs"]] == [("triage", True)]
    assert [c["name"] for c in second["tool_calls"]] == ["transfer_back_to_triage"]
    stays = cases["stays-at-the-front-desk"]["runs"][0]["turns"][0]
    assert stays["handoffs"] == [] and stays["tool_calls"] == []
