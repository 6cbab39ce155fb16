"""MCP as the specification and its official tools see it: the `mcp` Python client and
the conformance runner (npm `@modelcontextprotocol/conformance`) against `holodeck
deploy` run as a process of its own."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agui_client import JS
from server_harness import WEATHER, deploy_process
from test_serve_mcp import http_client, run


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The weather agent under `holodeck deploy`: its base URL."""
    home = tmp_path_factory.mktemp("home")
    with deploy_process(str(WEATHER), "--model", "test", env={"HOLODECK_HOME": str(home)}) as (
        _,
        url,
    ):
        yield url


def test_a_call_to_an_unknown_tool_is_a_json_rpc_invalid_params_error(deployed: str) -> None:
    from mcp.shared.exceptions import MCPError

    async def use() -> tuple[MCPError, bool]:
        async with http_client(deployed) as session:
            with pytest.raises(MCPError) as refused:
                await session.call_tool("nobody", {"question": "Hi"})
            # the session goes on: a known tool still answers
            answered = await session.call_tool("weather", {"question": "Hi"})
            return refused.value, answered.is_error

    error, answered_with_error = run(use())
    assert error.code == -32602
    assert "nobody" in error.message and "weather" in error.message
    assert answered_with_error is False


# The runner's scenarios that apply to a server whose only capability is tools, one tool
# per served agent. The others need what a tools-only server does not offer (logging,
# completion, resources, prompts, sampling, elicitation, progress, sessions held across
# requests) or the reference server's own fixture tools (`test_simple_text`,
# `test_error_handling`, `json_schema_2020_12_tool`, ...); docs/deploy.md lists them.
APPLICABLE = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection")


def conformance_runner() -> Path:
    """The runner's entry point in tests/js; or the test is skipped saying how."""
    if shutil.which("node") is None:
        pytest.skip("needs Node (apt-get install -y nodejs)")
    entry = JS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not entry.is_file():
        pytest.skip("needs tests/js's packages: npm ci --prefix tests/js (make test does it)")
    return entry


@pytest.mark.parametrize("scenario", APPLICABLE)
def test_the_official_conformance_runner_passes_the_scenarios_of_a_tools_server(
    deployed: str, scenario: str, tmp_path: Path
) -> None:
    runner = conformance_runner()
    options = ["--url", deployed + "/mcp", "--scenario", scenario, "--output-dir", str(tmp_path)]
    done = subprocess.run(
        ["node", str(runner), "server", *options],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    (checks_file,) = tmp_path.glob("*/checks.json")
    checks = json.loads(checks_file.read_text(encoding="utf-8"))
    failed = [(c["id"], c.get("errorMessage")) for c in checks if c["status"] == "FAILURE"]
    assert done.returncode == 0 and not failed, (failed, done.stdout[-2000:], done.stderr)
    assert any(c["status"] == "SUCCESS" for c in checks)
