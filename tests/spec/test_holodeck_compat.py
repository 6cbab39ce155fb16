"""agent.yaml and config.yaml written for the shipped HoloDeck: each form either works
here (and the test shows what it does) or is refused at its line with what to write."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

import scripted_servers
from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.llm.errors import ProviderError
from holodeck.runtime import Agent, Event, FinalMessage, ModelOutputError, ToolCallFinished
from holodeck.spec.diagnostics import SpecError
from holodeck.testing.runner import TestOptions, run_tests
from scripted_servers import OpenAIServer, delay, text
from yaml_dump import dump

openai_server = scripted_servers.openai_server
DEMO = Path(__file__).resolve().parents[1] / "mcp_servers" / "demo.py"


def agent(model: dict[str, Any] | None = None, **extra: Any) -> str:
    model = model or {"provider": "openai", "name": "gpt-4o"}
    return dump({"name": "shipped", "model": model, "instructions": {"inline": "Help."}, **extra})


def turn(built: Agent, prompt: str = "hi") -> list[Event]:
    async def collect() -> list[Event]:
        async with built:
            return [event async for event in built.run(prompt)]

    return asyncio.run(collect())


def refusal(root: Path, *, guesses: bool = False) -> str:
    with pytest.raises(SpecError) as caught:
        load_agent(root)
    message = caught.value.render()
    if not guesses:
        assert "did you mean" not in message, message  # a guess would point elsewhere
    return message


# --- config.yaml provider entries carry the model ---------------------------------------


def test_provider_entry_supplies_name_and_sampling_agent_yaml_wins(
    write: Write, openai_server: OpenAIServer
) -> None:
    entry = {
        "provider": "openai",
        "name": "gpt-4o",
        "temperature": 0.1,
        "max_tokens": 2048,
        "endpoint": openai_server.url,
        "api_key": "sk-entry",
        "auth_provider": "api_key",  # what happens here anyway: accepted
    }
    root = write(
        {
            "agent.yaml": agent({"provider": "openai", "temperature": 0.5}),
            "config.yaml": dump({"providers": {"openai": entry}}),
        }
    )
    openai_server.script(text("ok"))

    assert isinstance(turn(Agent(load_agent(root)))[-1], FinalMessage)
    body = openai_server.requests[0].body
    assert (body["model"], body["temperature"], body["max_completion_tokens"]) == (
        "gpt-4o",
        0.5,
        2048,
    )


# --- execution ------------------------------------------------------------------------


def test_llm_timeout_limits_each_model_request(write: Write, openai_server: OpenAIServer) -> None:
    model = {"provider": "openai", "name": "gpt-4o", "endpoint": openai_server.url}
    execution = {"llm_timeout": 0.5, "max_retries": 0}
    root = write({"agent.yaml": agent(model, execution=execution)})
    openai_server.script(delay(3, then=text("too late")))
    monkey_key = {"OPENAI_API_KEY": "sk-test"}

    spec = load_agent(root)
    assert spec.execution.model_timeout == 0.5
    with pytest.raises((ProviderError, ModelOutputError)) as caught:
        turn(Agent(spec, RunOptions(env=monkey_key)))
    assert "timed out" in str(caught.value).lower()


def test_config_yaml_execution_merges_field_by_field(write: Write) -> None:
    root = write(
        {
            "agent.yaml": agent(execution={"parallel_test_cases": 3}),
            "config.yaml": dump({"execution": {"llm_timeout": 30, "parallel_test_cases": 1}}),
        }
    )
    execution = load_agent(root).execution
    assert (execution.model_timeout, execution.parallel_test_cases) == (30, 3)


PEAK_TOOL = """
import threading, time
from pathlib import Path

_lock = threading.Lock()
_running = [0, 0]


def wait() -> str:
    \"\"\"Wait a moment.\"\"\"
    with _lock:
        _running[0] += 1
        _running[1] = max(_running)
    time.sleep(0.3)
    with _lock:
        _running[0] -= 1
    Path(__file__).with_name("peak.txt").write_text(str(_running[1]))
    return "waited"
"""


def test_parallel_test_cases_sets_how_many_cases_run_at_once(write: Write) -> None:
    tool = {"type": "function", "name": "wait", "file": "tools.py", "function": "wait"}
    cases = [{"name": f"c{i}", "input": f"case {i}", "expected_tools": ["wait"]} for i in range(4)]
    root = write(
        {
            "agent.yaml": agent(
                {"provider": "test"},
                tools=[tool],
                test_cases=cases,
                execution={"parallel_test_cases": 2},
            ),
            "tools.py": PEAK_TOOL,
        }
    )

    run = asyncio.run(run_tests(load_agent(root), TestOptions(run=RunOptions(model="test"))))

    assert run.concurrency == 2
    assert (root / "peak.txt").read_text() == "2"  # 4 cases, never more than 2 at once


# --- MCP request_timeout ----------------------------------------------------------------


def _mcp(**fields: Any) -> dict[str, Any]:
    command = {"command": sys.executable, "args": [str(DEMO)]}
    return {"type": "mcp", "name": "demo", "description": "Demo.", **command, **fields}


def _calling(*steps: tuple[str, dict[str, Any]]) -> tuple[FunctionModel, list[AgentInfo]]:
    """A model that makes one call per step, then answers; it records what it was offered."""
    pending = list(steps)
    offered: list[AgentInfo] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        offered.append(info)
        if not pending:
            yield "done"
            return
        name, args = pending.pop(0)
        calls: DeltaToolCalls = {0: DeltaToolCall(name, json.dumps(args), tool_call_id="c1")}
        yield calls

    return FunctionModel(stream_function=stream, model_name="script"), offered


def test_mcp_request_timeout_cuts_a_slow_call(write: Write) -> None:
    root = write({"agent.yaml": agent(tools=[_mcp(request_timeout=0.5)])})
    model, _ = _calling(("demo_nap", {"seconds": 2}))

    events = turn(Agent(load_agent(root), RunOptions(model=model)))

    (call,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert call.error is not None and "within 0.5 s" in call.error


def test_mcp_request_timeout_with_timeout_is_refused(write: Write) -> None:
    root = write({"agent.yaml": agent(tools=[_mcp(request_timeout=60, timeout=5)])})
    message = refusal(root)
    assert "without `request_timeout`" in message and "`startup_timeout`" in message


# --- function tool parameters -----------------------------------------------------------

ORDERS = '''
def get_order_status(order_id: str, verbose: bool = False) -> str:
    """Look an order up."""
    return f"{order_id}: shipped" + (" (by sea)" if verbose else "")
'''


def _function_tool(parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "name": "check_order_status",
        "description": "Retrieve order status by order ID",
        "file": "tools/orders.py",
        "function": "get_order_status",
        "parameters": parameters,
    }


def test_function_parameters_are_the_schema_the_model_is_offered(write: Write) -> None:
    parameters = {
        "order_id": {"type": "string", "description": "The order ID", "pattern": "^[0-9]+$"},
        "verbose": {"type": "boolean", "description": "Say how it travels"},
    }
    root = write(
        {"agent.yaml": agent(tools=[_function_tool(parameters)]), "tools/orders.py": ORDERS}
    )
    model, offered = _calling(("check_order_status", {"order_id": "12345"}))

    events = turn(Agent(load_agent(root), RunOptions(model=model)))

    (tool,) = offered[0].function_tools
    assert tool.parameters_json_schema == {
        "type": "object",
        "properties": parameters,
        "required": ["order_id"],
        "additionalProperties": False,
    }
    (call,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert call.result == "12345: shipped"


def test_function_parameters_must_match_the_signature(write: Write) -> None:
    parameters = {"order": {"type": "string"}, "verbose": {"type": "boolean", "required": "no"}}
    root = write(
        {"agent.yaml": agent(tools=[_function_tool(parameters)]), "tools/orders.py": ORDERS}
    )

    lines = refusal(root, guesses=True).splitlines()

    assert any(
        ":10:5:" in line and "has no argument `order`" in line and "order_id" in line
        for line in lines
    ), lines
    assert any("needs `order_id`" in line and "tools[0].parameters" in line for line in lines)
    assert any("`required` must be true or false" in line for line in lines)


# --- model.auth_provider, claude: / openai: blocks ---------------------------------------


SHIPPED_CLAUDE = """
name: legal_assistant
model:
  provider: anthropic
  name: claude-sonnet-4-6
  auth_provider: oauth_token
instructions: {inline: Help.}
"""


def test_auth_provider_other_than_api_key_is_refused_at_its_line(write: Write) -> None:
    message = refusal(write({"agent.yaml": SHIPPED_CLAUDE}))
    assert "agent.yaml:5:3" in message and "model.auth_provider" in message
    assert "api_key: ${ANTHROPIC_API_KEY}" in message


def test_backend_block_settings_with_a_meaning_here_carry_over(write: Write) -> None:
    root = write({"agent.yaml": agent(openai={"max_turns": 7, "effort": "high"})})
    spec = load_agent(root)
    assert spec.execution.max_tool_iterations == 7
    assert spec.model is not None and spec.model.reasoning_effort == "high"


def test_a_claude_block_selects_the_claude_harness_with_its_own_settings(write: Write) -> None:
    block = {"max_turns": 7, "effort": "max", "web_search": True, "max_concurrent_sessions": 3}
    spec = load_agent(write({"agent.yaml": agent(claude=block)}))
    assert spec.harness == "claude-sdk" and spec.claude is not None
    assert spec.claude.max_turns == 7 and spec.claude.effort == "max" and spec.claude.web_search
    assert spec.execution.max_tool_iterations != 7  # the harness counts its own turns
    assert spec.deployment is not None and spec.deployment.max_concurrent_turns == 3


def test_backend_block_settings_without_one_are_refused(write: Write) -> None:
    message = refusal(write({"agent.yaml": agent(claude={"turbo": True})}))
    assert "claude.turbo" in message

    message = refusal(write({"agent.yaml": agent(openai={"effort": "max"})}))
    assert (
        "`openai:`" in message and "the highest here is `model.reasoning_effort: high`" in message
    )


def test_auth_provider_in_a_config_yaml_entry_is_refused_there(write: Write) -> None:
    entry = {"provider": "anthropic", "name": "claude-sonnet-4-6", "auth_provider": "bedrock"}
    root = write({"agent.yaml": agent(), "config.yaml": dump({"providers": {"anthropic": entry}})})
    message = refusal(root)
    assert (
        "config.yaml" in message and "Claude through AWS Bedrock is not a provider here" in message
    )


# --- deployment: the container form -----------------------------------------------------
# (registry, platform, environment and a cloud target are used by `holodeck deploy --build`
# and `--emit`: tests/deploy_targets/test_deploy_manifests.py)

CONTAINER = {"health_check_path": "/healthz", "protocol": "grpc"}


@pytest.mark.parametrize("where", ["agent.yaml", "config.yaml"])
def test_container_deployment_is_refused_with_one_message(write: Write, where: str) -> None:
    files = {"agent.yaml": agent(), "config.yaml": ""}
    files[where] = (
        agent(deployment=CONTAINER) if where == "agent.yaml" else dump({"deployment": CONTAINER})
    )
    message = refusal(write(files))
    assert len(message.splitlines()) == 1, message
    assert "`health_check_path`: the server answers its health check at `/health`" in message
    # the protocol is said to be the server's, not the container's
    assert "`protocol: grpc` is not a protocol the shipped HoloDeck knew" in message
    assert "POST /v1/chat" in message and "AG-UI (`POST /awp`)" in message
