"""Handoffs in both formats: agent.yaml's `handoffs:` and an Omnigent image's inline
`type: handoff`; each mistake is reported at its line and field with what to write."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_invoke import invoke
from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.errors import DefinitionError
from holodeck.runtime import Agent, RunOptions
from holodeck.spec import SpecError
from holodeck.spec.diagnostics import Diagnostic

MODEL = "model: {provider: openai, name: gpt-4o}\n"
BILLING = (
    "name: billing\ndescription: Invoices, refunds, payments.\n"
    + MODEL
    + ("instructions: {inline: You are the billing desk.}\n")
)


def triage(handoffs: str, extra: str = "") -> str:
    return (
        "name: triage\n" + MODEL + "instructions: {inline: You route customers.}\n"
        "handoffs:\n" + handoffs + extra
    )


def errors_of(root: Path) -> list[Diagnostic]:
    with pytest.raises(SpecError) as caught:
        load_agent(root)
    return caught.value.errors


def one(diagnostics: list[Diagnostic], field: str) -> Diagnostic:
    matches = [d for d in diagnostics if d.field == field]
    assert len(matches) == 1, [d.render() for d in diagnostics]
    return matches[0]


def test_agent_yaml_handoffs_load_with_their_tool_and_description(write: Write) -> None:
    root = write(
        {
            "agent.yaml": triage(
                "  - {name: billing, path: billing/agent.yaml}\n"
                "  - {name: refunds, path: refunds, description: Money back.}\n"
            ),
            "billing/agent.yaml": BILLING,
            "refunds/agent.yaml": BILLING.replace("name: billing", "name: refunds"),
        }
    )
    spec = load_agent(root)
    assert [(h.name, h.tool, h.description, h.agent.name) for h in spec.handoffs] == [
        ("billing", "transfer_to_billing", "Invoices, refunds, payments.", "billing"),
        ("refunds", "transfer_to_refunds", "Money back.", "refunds"),
    ]
    assert spec.handoffs[0].agent.instructions == "You are the billing desk."


def test_a_case_may_expect_the_transfer_and_the_targets_tools(write: Write) -> None:
    cases = (
        "test_cases:\n  - name: invoice\n    input: Where is my invoice?\n"
        "    expected_tools: [transfer_to_billing, lookup_invoice]\n"
    )
    billing = BILLING + (
        "tools:\n  - {name: lookup_invoice, type: function, file: t.py, function: look,"
        " description: Look up.}\n"
    )
    root = write(
        {
            "agent.yaml": triage("  - {name: billing, path: billing}\n", cases),
            "billing/agent.yaml": billing,
            "billing/t.py": "def look(number: str) -> str:\n    return number\n",
        }
    )
    assert load_agent(root).test_cases[0].expected_tools is not None


def test_agent_yaml_handoff_mistakes_are_located(write: Write) -> None:
    root = write(
        {
            "agent.yaml": triage(
                "  - {name: billing, path: nowhere/agent.yaml}\n"
                "  - {name: self, path: agent.yaml}\n"
                "  - {name: desk, path: desk}\n"
                "  - {name: desk, path: desk}\n"
                "  - {name: lookup, path: desk}\n",
                "tools:\n  - {name: transfer_to_lookup, type: function, file: t.py, function: f,"
                " description: A tool.}\n",
            ),
            "t.py": "def f() -> str:\n    return ''\n",
            "desk/agent.yaml": BILLING.replace("name: billing", "name: desk"),
        }
    )
    errors = errors_of(root)
    missing = one(errors, "handoffs[0].path")
    assert missing.line == 5 and "agent not found" in missing.message
    itself = one(errors, "handoffs[1].path")
    assert "handed over from already" in itself.message
    assert itself.hint is not None and "transfer_back_to_" in itself.hint
    twice = one(errors, "handoffs[3].name")
    assert "duplicate handoff `desk`" in twice.message
    clash = one(errors, "handoffs[4].name")
    assert (
        "`transfer_to_lookup`" in clash.message and clash.hint == "rename the handoff or the tool"
    )


def test_a_target_handing_back_to_its_own_caller_is_refused(write: Write) -> None:
    root = write(
        {
            "agent.yaml": triage("  - {name: billing, path: billing}\n"),
            "billing/agent.yaml": BILLING + "handoffs:\n  - {name: triage, path: ../agent.yaml}\n",
        }
    )
    (error,) = errors_of(root)
    assert error.file == root / "billing" / "agent.yaml"
    assert error.field == "handoffs[0].path" and error.line == 6
    assert error.hint is not None and "without listing it" in error.hint


IMAGE = """spec_version: 1
name: triage
prompt: You route customers.
executor: {model: openai/gpt-4o}
tools:
  agents: [critic]
  billing_desk: {type: handoff, target_agent: billing, description: Invoices.}
  review: {type: handoff, target_agent: critic}
  helper_desk: {type: handoff, target_agent: helper}
  helper: {type: agent, description: Helps., prompt: You help.}
"""


def image(write: Write, config: str) -> Path:
    sub = "spec_version: 1\nname: {}\ndescription: The {} desk.\nprompt: You are {}.\n"
    return write(
        {
            "config.yaml": config,
            "agents/billing_dir/config.yaml": sub.format("billing", "billing", "billing"),
            "agents/critic/config.yaml": sub.format("critic", "critic", "critic"),
        }
    )


def test_omnigent_inline_handoffs_load(write: Write) -> None:
    spec = load_agent(image(write, IMAGE))
    assert [(h.tool, h.description, h.agent.name) for h in spec.handoffs] == [
        ("billing_desk", "Invoices.", "billing"),  # by its declared `name:`
        ("review", "The critic desk.", "critic"),  # a listed sub-agent
        ("helper_desk", "Helps.", "helper"),  # an inline `type: agent` entry
    ]
    assert list(spec.subagents) == ["critic", "helper"]
    # agents/billing_dir is reached by the handoff: no "not listed" warning
    assert not [w for w in spec.warnings if "billing" in w.message]


def test_omnigent_handoff_mistakes_are_located(write: Write) -> None:
    config = (
        IMAGE.split("  billing_desk")[0]
        + "  billing_desk: {type: handoff, target_agent: biling, pass_history: true}\n"
        + "  back: {type: handoff, target_agent: triage}\n"
        + "  nothing: {type: handoff}\n"
        + "  critic: {type: handoff, target_agent: billing}\n"
    )
    errors = errors_of(image(write, config))
    unknown = one(errors, "tools.billing_desk.target_agent")
    assert unknown.line == 7 and "no agent `biling` to hand off to" in unknown.message
    assert unknown.hint == "did you mean `billing`?"
    key = one(errors, "tools.billing_desk.pass_history")
    assert "`pass_history` is not a setting of a handoff" in key.message
    itself = one(errors, "tools.back.target_agent")
    assert "the agent itself" in itself.message
    missing = one(errors, "tools.nothing.target_agent")
    assert "needs `target_agent`" in missing.message
    assert any("duplicate tool name `critic`" in e.message for e in errors)


def test_handoffs_in_the_claude_harness_are_refused_until_it_is_turned_off(
    write: Write,
) -> None:
    root = write(
        {
            "agent.yaml": triage(
                "  - {name: billing, path: billing}\n",
                "claude: {}\n",
            ).replace("provider: openai, name: gpt-4o", "provider: anthropic, name: claude-x"),
            "billing/agent.yaml": BILLING,
        }
    )
    spec = load_agent(root)
    with pytest.raises(DefinitionError, match="cannot transfer a conversation") as caught:
        Agent(spec, RunOptions(env={"ANTHROPIC_API_KEY": "k"})).prepare()
    assert "--harness none" in str(caught.value) and str(root / "agent.yaml") in str(caught.value)
    Agent(spec, RunOptions(model="test", harness="none")).prepare()  # its own loop: fine


def test_validate_lists_the_handoffs_beside_the_tools(write: Write) -> None:
    root = write(
        {
            "agent.yaml": triage("  - {name: billing, path: billing/agent.yaml}\n"),
            "billing/agent.yaml": BILLING,
        }
    )
    result = invoke("validate", str(root))
    assert result.exit_code == 0, result.output
    assert "hands off with: transfer_to_billing (to billing)" in result.output
    listed = invoke("validate", "--json", str(root))
    assert '"transfer_to_billing": "billing"' in listed.output


def test_a_target_whose_own_tool_takes_the_hand_back_name_is_refused(write: Write) -> None:
    clashing = (
        "tools:\n  - {type: function, name: transfer_back_to_triage, file: t.py, function: f}\n"
    )
    root = write(
        {
            "agent.yaml": triage("  - {name: billing, path: billing}\n"),
            "billing/agent.yaml": BILLING + clashing,
            "billing/t.py": "def f() -> str:\n    return 'x'\n",
        }
    )
    (error,) = errors_of(root)
    assert error.field == "handoffs[0].path" and error.line == 5
    assert "`transfer_back_to_triage`" in error.message and error.hint == "rename that tool"

    config = IMAGE.split("  review:")[0]
    folder = image(write, config)
    tool = "def transfer_back_to_triage() -> str:\n    return 'x'\n"
    (folder / "agents/billing_dir/tools/python").mkdir(parents=True)
    (folder / "agents/billing_dir/tools/python/transfer_back_to_triage.py").write_text(
        tool, encoding="utf-8"
    )
    (error,) = errors_of(folder)
    assert error.field == "tools.billing_desk.target_agent"
    assert "`transfer_back_to_triage`" in error.message
