"""What a `claude:` definition asks of the harness, checked without starting the CLI:
selection, refusals, the CLI's tools on deploy and its environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from holodeck import load_agent
from holodeck.runtime.harness._build import harness_model
from holodeck.spec.diagnostics import SpecError
from server_harness import agent_dir

CLAUDE_MODEL = {"provider": "anthropic", "name": "claude-sonnet-4-5", "api_key": "x"}


def plan(root: Path, env: dict[str, str], served: bool = False) -> object:
    spec = load_agent(root)
    return harness_model(spec, None, env, "You help.", list, served=served).plan


def test_model_backend_claude_and_auth_provider_select_the_harness(tmp_path: Path) -> None:
    model = {**CLAUDE_MODEL, "backend": "claude", "auth_provider": "oauth_token"}
    spec = load_agent(agent_dir(tmp_path / "a", model=model))
    assert spec.harness == "claude-sdk" and spec.claude is not None
    assert spec.claude.auth_provider == "oauth_token"

    env = {"CLAUDE_CODE_OAUTH_TOKEN": "tok", "OPENAI_API_KEY": "secret", "PATH": "/bin"}
    child = plan(tmp_path / "a", env).environment()  # type: ignore[attr-defined]
    assert child["CLAUDE_CODE_OAUTH_TOKEN"] == "tok" and child["PATH"] == "/bin"
    assert "OPENAI_API_KEY" not in child or child["OPENAI_API_KEY"] == ""


def test_bypass_permissions_needs_the_explicit_acknowledgement(tmp_path: Path) -> None:
    root = agent_dir(
        tmp_path / "a", model=CLAUDE_MODEL, claude={"permission_mode": "bypassPermissions"}
    )
    with pytest.raises(SpecError, match="i_understand_this_is_unsafe"):
        load_agent(root)
    root = agent_dir(
        tmp_path / "b",
        model=CLAUDE_MODEL,
        claude={"permission_mode": "acceptAll", "i_understand_this_is_unsafe": True},
    )
    assert plan(root, {}).permission_mode() == "bypassPermissions"  # type: ignore[attr-defined]


def test_on_deploy_shell_and_file_tools_need_the_deployment_to_allow_them(
    tmp_path: Path,
) -> None:
    claude = {"bash": {"enabled": True}, "file_system": {"read": True, "write": True}}
    root = agent_dir(tmp_path / "a", model=CLAUDE_MODEL, claude=claude)
    assert plan(root, {}).builtin_tools() == ["Bash", "Read", "Glob", "Grep", "Write"]  # type: ignore[attr-defined]
    assert plan(root, {}, served=True).builtin_tools() == []  # type: ignore[attr-defined]
    allowed = agent_dir(
        tmp_path / "b", model=CLAUDE_MODEL, claude=claude, deployment={"harness_tools": ["bash"]}
    )
    assert plan(allowed, {}, served=True).builtin_tools() == ["Bash"]  # type: ignore[attr-defined]


def test_working_directory_is_fresh_per_session_under_holodeck_work(tmp_path: Path) -> None:
    root = agent_dir(tmp_path / "a", model=CLAUDE_MODEL, claude={})
    harness = plan(root, {})
    one, two = harness.working_directory("s1"), harness.working_directory("s2")  # type: ignore[attr-defined]
    assert one != two and one.parent == (root / ".holodeck" / "work").resolve()


def test_a_case_may_expect_the_built_in_tools_its_claude_settings_turn_on(tmp_path: Path) -> None:
    case = {"name": "shell", "input": "List the files", "expected_tools": ["Bash", "Read"]}
    claude = {"bash": {"enabled": True}, "file_system": {"read": True}}
    root = agent_dir(tmp_path / "a", model=CLAUDE_MODEL, claude=claude, test_cases=[case])
    (loaded,) = load_agent(root).test_cases
    assert loaded.name == "shell"

    # not turned on: the harness is never given Bash, so a case cannot expect it
    off = agent_dir(tmp_path / "b", model=CLAUDE_MODEL, claude={}, test_cases=[case])
    with pytest.raises(SpecError, match="expected tool `Bash` is not one of the agent's tools"):
        load_agent(off)
