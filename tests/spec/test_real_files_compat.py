"""Definitions people bring, in the shapes of the shipped HoloDeck's samples and fixtures
and of Omnigent's examples: each loads, or `holodeck validate` says every problem in one
pass, and a key warns or is refused by the rule of docs/compatibility.md."""

from __future__ import annotations

import os
import re
import typing
from pathlib import Path

import pytest
from claude_agent_sdk.types import PermissionMode
from click.testing import CliRunner, Result

from conftest import Write
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.runtime.harness._sdk_options import HarnessPlan
from holodeck.spec.diagnostics import Diagnostic, Severity, SpecError

REPO = Path(__file__).resolve().parents[2]

# an agent.yaml as the shipped HoloDeck's samples write one (Anthropic, a key variable)
SAMPLE = """\
name: support
description: Answers questions about orders.
model:
  provider: anthropic
  name: claude-sonnet-4-5
  api_key: sk-ant-written-here
instructions:
  inline: You answer questions about orders.
"""
# an image as Omnigent writes one
IMAGE = "spec_version: 1\nname: omni\nexecutor:\n  model: openai/gpt-4o-mini\n"


def validate(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Result:
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, ["validate", *args], env=env)
    finally:
        os.chdir(previous)


def errors_of(root: Path, **kwargs: bool) -> list[Diagnostic]:
    with pytest.raises(SpecError) as caught:
        load_agent(root, **kwargs)
    return caught.value.errors


def rendered(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> str:
    return "\n".join(d.render() for d in diagnostics)


# --- deployment.protocol: ag-ui ------------------------------------------------------------


def test_a_sample_whose_only_error_was_protocol_ag_ui_validates(write: Write) -> None:
    root = write({"agent.yaml": SAMPLE + "deployment:\n  protocol: ag-ui\n  port: 8080\n"})
    result = validate("agent.yaml", cwd=root)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("OK agent.yaml")


# --- stale messages ------------------------------------------------------------------------


def test_compatibility_page_lists_no_command_that_exists_as_unavailable() -> None:
    page = (REPO / "docs" / "compatibility.md").read_text(encoding="utf-8")
    unavailable = [line for line in page.splitlines() if "not available" in line]
    assert unavailable, "the page says which earlier commands are not here"
    for command in ("`holodeck test view`", "`holodeck mcp`"):
        assert not any(command in line for line in unavailable), command
    deployment = [line for line in page.splitlines() if line.startswith("| `deployment:`")]
    assert deployment and "builds no container image" not in deployment[0]


# --- keys that only tune what this runtime does differently: warnings ----------------------


def test_claude_block_tuning_keys_of_the_shipped_holodeck_are_warnings(write: Write) -> None:
    claude = (
        "claude:\n  permission_mode: acceptEdits\n  session_memory_estimate_mib: 400\n"
        "  bash:\n    enabled: true\n    allow_unsafe: false\n"
    )
    root = write({"agent.yaml": SAMPLE + claude})
    spec = load_agent(root)
    assert spec.claude is not None and spec.claude.bash is not None and spec.claude.bash.enabled
    warned = {w.field: w for w in spec.warnings}
    assert set(warned) == {"claude.session_memory_estimate_mib", "claude.bash.allow_unsafe"}
    assert "deployment.max_concurrent_turns" in warned["claude.session_memory_estimate_mib"].message
    assert all("unknown field" not in w.message for w in spec.warnings)
    strict = errors_of(root, strict=True)
    assert {e.field for e in strict} == set(warned)


def test_omnigent_smart_routing_and_ask_timeout_are_warnings(write: Write) -> None:
    config = IMAGE + (
        "  config:\n    smart_routing_harness: auto\nguardrails:\n  ask_timeout: 120\n"
    )
    root = write({"config.yaml": config, "AGENTS.md": "You help."})
    spec = load_agent(root)
    assert spec.model is not None and spec.model.name == "gpt-4o-mini"
    warned = {w.field: w.message for w in spec.warnings}
    assert set(warned) == {"executor.config.smart_routing_harness", "guardrails.ask_timeout"}
    assert "Smart Routing" in warned["executor.config.smart_routing_harness"]
    assert "never asks" in warned["guardrails.ask_timeout"]
    assert {e.field for e in errors_of(root, strict=True)} == set(warned)


# --- accepted ------------------------------------------------------------------------------


def test_permission_mode_auto_reaches_the_harness(write: Write) -> None:
    root = write({"agent.yaml": SAMPLE + "claude:\n  permission_mode: auto\n"})
    spec = load_agent(root)
    assert spec.claude is not None and spec.claude.permission_mode == "auto"
    image = write(
        {
            "config.yaml": IMAGE.replace("openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5")
            + "  config:\n    harness: claude-sdk\n    permission_mode: auto\n",
            "AGENTS.md": "You help.",
        }
    )
    spec = load_agent(image)
    assert spec.claude is not None and spec.claude.permission_mode == "auto"
    # the SDK gets the mode as written: a mode of the pinned Claude Agent SDK
    plan = HarnessPlan(
        claude=spec.claude,
        model="claude-sonnet-4-5",
        instructions=None,
        root=image,
        env={},
        api_key=None,
        base_url=None,
        served=False,
        served_tools=frozenset(),
    )
    assert plan.permission_mode() == "auto"
    assert "auto" in typing.get_args(PermissionMode)


def test_keyword_index_in_memory_is_what_the_embedded_store_does(write: Write) -> None:
    tool = (
        "tools:\n  - name: policies\n    type: hierarchical_document\n"
        "    description: Policy documents.\n    source: data/policies.md\n"
        "    keyword_index:\n      provider: in-memory\n"
    )
    files = {"agent.yaml": SAMPLE + tool, "data/policies.md": "# Returns\n\nWithin 30 days.\n"}
    spec = load_agent(write(files))
    assert spec.tool_names == ["policies"] and spec.warnings == ()
    other = {**files, "agent.yaml": files["agent.yaml"].replace("in-memory", "opensearch")}
    message = rendered(errors_of(write(other)))
    assert "keyword_index: {provider: in-memory}" in message


def test_oauth_token_without_a_claude_block_gets_a_hint_that_works(write: Write) -> None:
    text = SAMPLE.replace("  api_key: sk-ant-written-here\n", "  auth_provider: oauth_token\n")
    (error,) = errors_of(write({"agent.yaml": text}))
    assert error.field == "model.auth_provider" and error.hint is not None
    assert "add `claude: {}`" in error.hint
    # following the hint keeps the token: the harness authenticates with it
    spec = load_agent(write({"agent.yaml": text + "claude: {}\n"}))
    assert spec.claude is not None and spec.claude.auth_provider == "oauth_token"


# --- Omnigent's single-file agent YAML -----------------------------------------------------

SINGLE_FILE = """\
name: kimi-hello
description: Smallest agent, in one file.
executor:
  harness: openai-agents
  model: openai/gpt-4o-mini
prompt: |
  You are a concise assistant.
"""


def test_omnigent_single_file_agent_is_read_as_one(write: Write) -> None:
    root = write({"kimi_hello.yaml": SINGLE_FILE})
    spec = load_agent(root / "kimi_hello.yaml")
    assert spec.format == "image" and spec.name == "kimi-hello"
    assert spec.instructions == "You are a concise assistant.\n"
    assert spec.model is not None and (spec.model.provider, spec.model.name) == (
        "openai",
        "gpt-4o-mini",
    )
    result = validate("kimi_hello.yaml", cwd=root, env={"OPENAI_API_KEY": "sk-set"})
    assert result.exit_code == 0, result.output
    assert "execution" not in result.output


def test_single_file_agent_errors_name_its_own_keys(write: Write) -> None:
    root = write({"agent.yaml": SINGLE_FILE.replace("gpt-4o-mini", "gpt-4o-mini\n  timeout: 30")})
    message = rendered(errors_of(root))
    assert "executor.timeout" in message and "did you mean" not in message
    function = "tools:\n  summarize:\n    type: function\n    callable: pkg.tools.summarize\n"
    message = rendered(errors_of(write({"agent.yaml": SINGLE_FILE + function})))
    assert "not supported in a single-file agent" in message
    assert "of an image directory (this file as its config.yaml" in message


# --- keys that give the agent tools: errors until they work --------------------------------


@pytest.mark.parametrize(
    ("block", "says"),
    [
        ("timers: true\n", "timer tools"),
        ("spawn:\n  agents: [helper]\n", "sessions of other agents"),
    ],
)
def test_omnigent_keys_that_give_tools_are_errors_saying_so(
    write: Write, block: str, says: str
) -> None:
    root = write({"config.yaml": IMAGE + block, "AGENTS.md": "You help."})
    (error,) = errors_of(root)
    key = block.split(":")[0]
    assert error.field == key and error.line == IMAGE.count("\n") + 1
    assert says in error.message and "does not offer these tools" in error.message
    assert "ignored" not in error.message


def test_omnigent_tool_keys_that_turn_nothing_on_are_accepted(write: Write) -> None:
    root = write({"config.yaml": IMAGE + "timers: false\nos_env: null\n", "AGENTS.md": "Hi."})
    assert load_agent(root).warnings == ()


# --- --strict and deployment.target --------------------------------------------------------


def test_strict_makes_the_deployment_target_warning_an_error(write: Write) -> None:
    root = write({"agent.yaml": SAMPLE + "deployment:\n  target:\n    provider: azure\n"})
    (warning,) = load_agent(root).warnings
    assert warning.field == "deployment.target"
    (error,) = errors_of(root, strict=True)
    assert error.field == "deployment.target" and error.severity is Severity.ERROR
    assert validate("--strict", "agent.yaml", cwd=root).exit_code == 2


# --- every problem in one pass -------------------------------------------------------------


def test_a_missing_required_field_hides_nothing_else(write: Write) -> None:
    text = (
        "model:\n  provider: anthropic\n  name: claude-sonnet-4-5\n  api_key: sk-ant-x\n"
        "instructions:\n  file: prompts/system.md\n"
        "tool_filtering:\n  enabled: true\n"
        "tools:\n  - name: lookup\n    type: function\n    description: Looks up.\n"
        "    file: tools/lookup.py\n    function: lookup\n"
        "test_cases:\n  - input: Where is my order?\n    expected_tools: [lookup, refund]\n"
    )
    root = write(
        {"agent.yaml": text, "tools/lookup.py": "def lookup(q: str) -> str:\n    return q\n"}
    )
    result = validate("agent.yaml", cwd=root)
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert any(re.search(r"error: name: required field is missing", line) for line in lines)
    assert any("instructions.file: instructions file not found" in line for line in lines)
    assert any("expected tool `refund`" in line for line in lines)
    assert any("warning: tool_filtering" in line for line in lines)
    assert not any("expected tool `lookup`" in line for line in lines)
    assert lines[-1].endswith("3 error(s)")


# --- a missing API key ---------------------------------------------------------------------


def test_a_missing_api_key_is_a_validate_warning_naming_the_variable(write: Write) -> None:
    root = write({"agent.yaml": SAMPLE.replace("  api_key: sk-ant-written-here\n", "")})
    result = validate("agent.yaml", cwd=root)
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if "API key" in line]
    assert line.startswith("agent.yaml:3:1: warning: model: no API key for `anthropic`")
    assert "set ANTHROPIC_API_KEY" in line
    strict = validate("--strict", "agent.yaml", cwd=root)
    assert strict.exit_code == 2 and "error: model: no API key" in strict.output
    # the environment, or the .env beside the agent, gives it
    assert "API key" not in validate("agent.yaml", cwd=root, env={"ANTHROPIC_API_KEY": "k"}).output
    (root / ".env").write_text("ANTHROPIC_API_KEY=from-dotenv\n", encoding="utf-8")
    assert validate("--strict", "agent.yaml", cwd=root).exit_code == 0
