"""`holodeck validate` on controls: settings that cannot work are errors at their line,
a tools_policy pattern that matches no tool is a warning at its line, the effective tool
set is listed; and the shipped HoloDeck's and Omnigent's forms load as these controls."""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conftest import Write
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.spec.diagnostics import SpecError

HEAD = """\
name: demo
model:
  provider: openai
  name: gpt-4o-mini
  api_key: sk-x
instructions: {inline: You help.}
tools:
  - {type: function, name: lookup, file: tools.py, function: lookup}
"""
TOOLS = "def lookup(q: str) -> str:\n    return q\n"


def validate(root: Path) -> Result:
    previous = Path.cwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(cli, ["validate", "agent.yaml"])
    finally:
        os.chdir(previous)


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_cost_cap_on_a_model_with_no_price_is_an_error_at_the_cap(write: Write) -> None:
    yaml = (
        HEAD.replace("provider: openai", "provider: ollama").replace("gpt-4o-mini", "llama3.2")
        + "limits:\n  session:\n    max_cost_usd: 0.5\n"
    )
    root = write({"agent.yaml": yaml, "tools.py": TOOLS})

    result = validate(root)

    assert result.exit_code == 2
    where = f"agent.yaml:{line_of(yaml, 'max_cost_usd')}"
    assert where in result.output and "limits.session.max_cost_usd" in result.output
    assert "no price is known for `ollama/llama3.2`" in result.output


def test_a_fallback_naming_an_unknown_provider_is_an_error_at_its_line(write: Write) -> None:
    yaml = HEAD.replace("  api_key: sk-x\n", "  api_key: sk-x\n  fallbacks:\n    - opnai/gpt-4o\n")
    root = write({"agent.yaml": yaml, "tools.py": TOOLS})

    result = validate(root)

    assert result.exit_code == 2
    assert f"agent.yaml:{line_of(yaml, 'opnai/gpt-4o')}" in result.output
    assert "unknown provider `opnai`" in result.output and "openai" in result.output


def test_a_policy_pattern_that_matches_no_tool_is_a_warning_and_the_tool_set_is_listed(
    write: Write,
) -> None:
    yaml = HEAD + "tools_policy:\n  deny: [lookup, delete_*]\n"
    root = write({"agent.yaml": yaml, "tools.py": TOOLS})

    result = validate(root)

    assert result.exit_code == 0
    assert f"agent.yaml:{line_of(yaml, 'delete_*')}" in result.output
    assert "warning" in result.output and "`delete_*` matches none" in result.output
    assert "tools offered: none" in result.output
    assert "denied by tools_policy: lookup" in result.output


def test_a_pattern_an_mcp_servers_tools_may_match_is_not_warned_about(write: Write) -> None:
    mcp = "  - {type: mcp, name: files, command: npx, args: [x]}\n"
    yaml = HEAD + mcp + "tools_policy:\n  deny: [files.write_*]\n"
    root = write({"agent.yaml": yaml, "tools.py": TOOLS})

    result = validate(root)

    assert result.exit_code == 0 and "warning" not in result.output
    assert "and the tools of MCP servers files (known once they run)" in result.output


def test_the_shipped_holodeck_budget_fallback_and_tool_lists_become_controls(
    write: Write,
) -> None:
    claude = (
        "openai:\n  max_budget_usd: 2.5\n  fallback_model: anthropic/claude-haiku-4-5\n"
        "  allowed_tools: [lookup, mcp__files__read]\n  disallowed_tools: [secret]\n"
    )
    root = write({"agent.yaml": HEAD + claude, "tools.py": TOOLS})

    spec = load_agent(root)

    assert spec.limits is not None and spec.limits.session is not None
    assert spec.limits.session.max_cost_usd == Decimal("2.5")
    assert spec.model is not None and spec.model.fallbacks == ["anthropic/claude-haiku-4-5"]
    assert spec.tools_policy is not None
    assert spec.tools_policy.allow == ["lookup", "files.read"]
    assert spec.tools_policy.deny == ["secret"]


IMAGE = """\
spec_version: 1
name: omni
llm:
  model: openai/gpt-4o-mini
  fallback_models: [anthropic/claude-haiku-4-5]
"""


def test_omnigent_cost_budget_policies_and_fallback_models_load_as_controls(
    write: Write,
) -> None:
    policies = "guardrails:\n  policies:\n    cost_budget: {max_usd: 1.25}\n"
    root = write({"config.yaml": IMAGE + policies})

    spec = load_agent(root)

    assert spec.model is not None and spec.model.fallbacks == ["anthropic/claude-haiku-4-5"]
    assert spec.limits is not None and spec.limits.session is not None
    assert spec.limits.session.max_cost_usd == Decimal("1.25")


def test_an_omnigent_policy_of_another_kind_is_an_error_saying_what_to_write(
    write: Write,
) -> None:
    root = write({"config.yaml": IMAGE + "policies:\n  - {type: label, label: trust}\n"})

    with pytest.raises(SpecError) as caught:
        load_agent(root)

    rendered = caught.value.render()
    assert "config.yaml:7" in rendered and "policy `label` has no equal here" in rendered
    assert "limits:" in rendered and "guardrails:" in rendered


def test_config_yaml_caps_are_defaults_an_agents_own_caps_win_one_by_one(write: Write) -> None:
    config = (
        "limits:\n  turn: {max_tool_calls: 5, max_requests: 9}\n  session: {max_tokens: 1000}\n"
    )
    agent = HEAD + "limits:\n  turn: {max_tool_calls: 2}\n"
    root = write({"agent.yaml": agent, "tools.py": TOOLS, "config.yaml": config})

    limits = load_agent(root).limits

    assert limits is not None and limits.turn is not None and limits.session is not None
    assert (limits.turn.max_tool_calls, limits.turn.max_requests) == (2, 9)
    assert limits.session.max_tokens == 1000


def test_a_config_yaml_cost_cap_on_an_unpriced_model_is_reported_at_the_model(
    write: Write,
) -> None:
    yaml = HEAD.replace("provider: openai", "provider: ollama").replace("gpt-4o-mini", "llama3.2")
    config = "limits:\n  session: {max_cost_usd: 1}\n"
    root = write({"agent.yaml": yaml, "tools.py": TOOLS, "config.yaml": config})

    result = validate(root)

    assert result.exit_code == 2
    assert f"agent.yaml:{line_of(yaml, 'provider: ollama') - 1}" in result.output
    assert "limits.session.max_cost_usd cannot be enforced" in result.output
