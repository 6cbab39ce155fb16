"""Traces of a conversation handed from triage to billing and back: each handoff is a
span of its own (`handoff <agent>`) with the agents and the reason as attributes, in the
case's trace. `holodeck test` on the offline model exports to the local OTLP receiver."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cli_invoke import invoke
from conftest import Write
from handoff_desks import desk_files
from holodeck.observability import shutdown_shared
from otlp_receiver import Received, otlp_http


def test_each_handoff_is_a_span_with_its_agents_and_reason(write: Write, tmp_path: Path) -> None:
    with otlp_http() as received:
        observability = {
            "enabled": True,
            "traces": {"schedule_delay_millis": 50},
            "exporters": {"otlp": {"endpoint": received.endpoint, "protocol": "http"}},
        }
        cases = [
            {
                "name": "there-and-back",
                "turns": [
                    {"input": 'Invoice 7? /call transfer_to_billing {"reason": "invoices"}'},
                    {"input": "Bye /call transfer_back_to_triage"},
                ],
            }
        ]
        root = write(desk_files(observability=observability, test_cases=cases))
        try:
            result = invoke("test", str(root), "--model", "test", cwd=tmp_path)
            assert result.exit_code == 0, result.output

            def both(r: Received) -> bool:
                names = {s.name for s in r.spans}
                return {"handoff billing", "handoff triage", "test_case there-and-back"} <= names

            received.wait_for(both)
        finally:
            asyncio.run(shutdown_shared())

    spans = {s.name: s for s in received.spans}
    there, back = spans["handoff billing"], spans["handoff triage"]
    assert there.attributes == {
        "holodeck.handoff.from_agent": "triage",
        "holodeck.handoff.to_agent": "billing",
        "holodeck.handoff.back": False,
        "holodeck.handoff.reason": "invoices",
    }
    assert back.attributes["holodeck.handoff.from_agent"] == "billing"
    assert back.attributes["holodeck.handoff.back"] is True
    # in the case's trace
    case = spans["test_case there-and-back"]
    assert there.trace_id == case.trace_id == back.trace_id
