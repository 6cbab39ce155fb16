"""MCP as the specification and its official tools see it: the `mcp` Python client and
the conformance runner (npm `@modelcontextprotocol/conformance`) against `holodeck
deploy` run as a process of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

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

