"""`holodeck validate` on guardrails: settings that cannot work are errors at their line
(an invalid regular expression, a judge with no model to ask, a check that cannot
redact); Omnigent's prompt policies load as judge checks, and what has no equal here is
an error at its line saying what to write."""

from __future__ import annotations

import pytest

from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.spec.diagnostics import SpecError
from test_controls_validate import HEAD, TOOLS, line_of, validate

IMAGE = "spec_version: 1\nname: omni\nllm:\n  model: openai/gpt-4o-mini\n"


def errors(root: object) -> str:
    with pytest.raises(SpecError) as caught:
        load_agent(root)  # type: ignore[arg-type]
    return caught.value.render()


def test_an_invalid_regular_expression_is_an_error_at_its_line(write: Write) -> None:
    yaml = (
        HEAD + "guardrails:\n  input:\n    - block_patterns:\n        - ok\n        - '(unclosed'\n"
    )
    root = write({"agent.yaml": yaml, "tools.py": TOOLS})

    result = validate(root)

    assert result.exit_code == 2
    assert f"agent.yaml:{line_of(yaml, '(unclosed')}" in result.output
    assert "guardrails.input[0].block_patterns[1]: not a valid regular expression" in result.output


def test_a_check_that_cannot_redact_or_has_two_kinds_is_an_error_at_its_line(
    write: Write,
) -> None:
    yaml = (
        HEAD + "guardrails:\n  output:\n    - max_length: 100\n      action: redact\n"
        "    - pii: [email]\n      block_keywords: [x]\n"
    )
    root = write({"agent.yaml": yaml, "tools.py": TOOLS})

    result = validate(root)

    assert result.exit_code == 2
    assert f"agent.yaml:{line_of(yaml, 'max_length')}" in result.output
    assert "`max_length` cannot redact" in result.output and "action: block" in result.output
    assert f"agent.yaml:{line_of(yaml, 'pii:')}" in result.output
    assert "a check has exactly one of" in result.output


def test_a_judge_with_no_model_to_ask_is_an_error_at_its_line(write: Write) -> None:
    config = "spec_version: 1\nname: nomodel\nguardrails:\n  input:\n    - judge:\n"
    config += "        criteria: No medical advice.\n"
    root = write({"config.yaml": config, "AGENTS.md": "You help."})

    rendered = errors(root)

    assert f"config.yaml:{line_of(config, 'judge:')}:" in rendered
    assert "this judge check has no model to ask" in rendered
    assert "judge: {criteria: ..., model:" in rendered


def test_a_judge_naming_an_unknown_provider_is_an_error_at_its_line(write: Write) -> None:
    yaml = (
        HEAD + "guardrails:\n  input:\n    - judge:\n        criteria: Be kind.\n"
        "        model: {provider: nowhere, name: m}\n"
    )
    root = write({"agent.yaml": yaml, "tools.py": TOOLS})

    result = validate(root)

    assert result.exit_code == 2
    assert f"agent.yaml:{line_of(yaml, 'nowhere')}" in result.output
    assert "unknown provider `nowhere` for this judge" in result.output


def test_output_checks_on_a_structured_answer_are_an_error(write: Write) -> None:
    yaml = (
        HEAD + "response_format: {type: object, properties: {a: {type: string}}}\n"
        "guardrails:\n  output:\n    - pii: [card]\n      action: redact\n"
    )
    root = write({"agent.yaml": yaml, "tools.py": TOOLS})

    result = validate(root)

    assert result.exit_code == 2
    assert f"agent.yaml:{line_of(yaml, 'pii')}" in result.output
    assert "cannot apply to a structured answer" in result.output


def test_omnigent_prompt_policies_load_as_judge_checks_beside_an_images_own(
    write: Write,
) -> None:
    config = IMAGE + (
        "guardrails:\n"
        "  input:\n    - {pii: [email], action: redact}\n"
        "  policies:\n"
        "    no_canada:\n"
        "      type: prompt\n"
        "      on: [request, response]\n"
        "      prompt: Deny anything about Canada.\n"
        "      llm: {model: anthropic/claude-haiku-4-5}\n"
        "    budget: {type: cost_budget, max_usd: 2}\n"
    )
    root = write({"config.yaml": config, "AGENTS.md": "You help."})

    spec = load_agent(root)

    assert spec.guardrails is not None
    pii, judge = spec.guardrails.input
    assert pii.pii == ["email"] and pii.action == "redact"
    (answer,) = spec.guardrails.output
    for check in (judge, answer):
        assert check.name == "no_canada" and check.judge is not None
        assert check.judge.criteria == "Deny anything about Canada."
        assert check.judge.model is not None
        assert (check.judge.model.provider, check.judge.model.name) == (
            "anthropic",
            "claude-haiku-4-5",
        )
    assert spec.limits is not None and spec.limits.session is not None


def test_what_omnigent_guardrails_have_and_these_cannot_do_is_an_error_at_its_line(
    write: Write,
) -> None:
    config = IMAGE + (
        "guardrails:\n"
        "  ask_timeout: 60\n"
        "  labels: {trust: {initial: '0'}}\n"
        "  policies:\n"
        "    tools:\n"
        "      type: prompt\n"
        "      on: [tool_call]\n"
        "      prompt: Deny shell tools.\n"
        "      action: [allow, ask]\n"
        "    gate: {type: function, function: my.policy}\n"
    )
    root = write({"config.yaml": config, "AGENTS.md": "You help."})

    rendered = errors(root)

    assert f"config.yaml:{line_of(config, 'ask_timeout')}" in rendered
    assert f"config.yaml:{line_of(config, 'labels')}" in rendered
    assert f"config.yaml:{line_of(config, 'tool_call')}" in rendered
    assert "use `on: [request]` or `on: [response]`" in rendered
    assert f"config.yaml:{line_of(config, 'ask]')}" in rendered
    assert "only `allow` and `deny` have an equal here" in rendered
    assert f"config.yaml:{line_of(config, 'gate')}" in rendered
    assert "guardrails: {input: [...], output: [...]}" in rendered


def test_config_yaml_guardrails_are_defaults_an_agents_own_side_replaces(
    write: Write,
) -> None:
    config = (
        "guardrails:\n"
        "  input: [{block_keywords: [password]}]\n"
        "  output: [{pii: [card], action: redact}]\n"
    )
    agent = HEAD + "guardrails:\n  input: [{pii: [email], action: redact}]\n"
    own = write({"agent.yaml": agent, "tools.py": TOOLS, "config.yaml": config})
    bare = write({"agent.yaml": HEAD, "tools.py": TOOLS, "config.yaml": config})

    mine, defaults = load_agent(own).guardrails, load_agent(bare).guardrails

    assert mine is not None and defaults is not None
    assert [c.pii for c in mine.input] == [["email"]]  # the agent's input list won
    assert [c.pii for c in mine.output] == [["card"]]  # the default's output stayed
    assert [c.block_keywords for c in defaults.input] == [["password"]]
