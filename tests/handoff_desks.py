"""A triage agent handing over to a billing agent (offline `test` model), with a case
that goes to billing and back: shared by the handoff report, trace and chat tests."""

from __future__ import annotations

from typing import Any

from yaml_dump import dump

INVOICES = '''
def lookup_invoice(number: str) -> str:
    """Look up an invoice by its number."""
    return f"invoice {number}: 42 EUR, paid"
'''


def desk_files(**triage_fields: Any) -> dict[str, str]:
    billing = {
        "name": "billing",
        "model": {"provider": "test"},
        "instructions": {"inline": "You are the billing desk."},
        "tools": [
            {
                "type": "function",
                "name": "lookup_invoice",
                "file": "tools.py",
                "function": "lookup_invoice",
            }
        ],
    }
    triage = {
        "name": "triage",
        "model": {"provider": "test"},
        "instructions": {"inline": "You route customers."},
        "handoffs": [{"name": "billing", "path": "billing/agent.yaml"}],
        "test_cases": [
            {
                "name": "there-and-back",
                "turns": [
                    {
                        "input": "Is invoice 7 paid?",
                        "expected_tools": ["transfer_to_billing", "lookup_invoice"],
                    },
                    {"input": "Thanks, bye.", "expected_tools": ["transfer_back_to_triage"]},
                ],
                "tool_order": "exact",
            }
        ],
        **triage_fields,
    }
    return {
        "agent.yaml": dump(triage),
        "billing/agent.yaml": dump(billing),
        "billing/tools.py": INVOICES,
    }
