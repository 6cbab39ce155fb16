"""docs/controls.md's examples load as written and do what the page says: the caps, the
fallbacks, the tool policy and the image's Omnigent forms."""

from __future__ import annotations

import asyncio
import re
from decimal import Decimal
from pathlib import Path

import pytest

import scripted_servers
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent
from holodeck.spec.models.agent_spec import AgentSpec
from scripted_servers import OpenAIServer, text

openai_server = scripted_servers.openai_server
REPO = Path(__file__).resolve().parents[2]
TOOLS = "def lookup(q: str) -> str:\n    return q\n\ndef delete_order(order: str) -> str:\n    return order\n"


def yaml_blocks() -> list[str]:
    page = (REPO / "docs" / "controls.md").read_text(encoding="utf-8")
    return re.findall(r"^```yaml\n(.*?)^```$", page, flags=re.M | re.S)


def load(tmp_path: Path, block: str, name: str) -> AgentSpec:
    root = tmp_path / name
    root.mkdir()
    file = "config.yaml" if block.startswith("spec_version") else "agent.yaml"
    (root / file).write_text(block, encoding="utf-8")
    (root / "tools.py").write_text(TOOLS, encoding="utf-8")
    if file == "agent.yaml":  # the `backup` provider entry the fallback example names
        (root / "config.yaml").write_text(
            "providers:\n  backup: {provider: openai}\n", encoding="utf-8"
        )
    return load_agent(root)


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-docs")


def test_every_example_loads_with_its_controls(tmp_path: Path, keys: None) -> None:
    caps, fallbacks, policy, image = (
        load(tmp_path, block, f"example{i}") for i, block in enumerate(yaml_blocks()[:4])
    )
    assert caps.limits is not None and caps.limits.turn is not None
    assert caps.limits.turn.max_tool_calls == 10
    assert caps.limits.session is not None and caps.limits.session.max_cost_usd == Decimal("0.50")
    assert caps.limits.key_daily is not None
    assert fallbacks.model is not None and len(fallbacks.model.fallbacks) == 2
    assert policy.tools_policy is not None
    assert policy.tools_policy.allows("lookup") and not policy.tools_policy.allows("delete_order")
    assert policy.tools_policy.allows("files_read", "files.read_file")
    assert not policy.tools_policy.allows("files_write", "files.write_file")
    assert image.model is not None and image.model.fallbacks == ["anthropic/claude-haiku-4-5"]
    assert image.limits is not None and image.limits.session is not None
    assert image.limits.session.max_cost_usd == Decimal("1.00")


def test_the_tool_policy_example_offers_the_model_only_what_it_allows(
    tmp_path: Path, keys: None, openai_server: OpenAIServer
) -> None:
    block = yaml_blocks()[2].replace(
        "model: {provider: test}",
        f"model: {{provider: openai, name: gpt-4o-mini, endpoint: '{openai_server.url}'}}",
    )
    block = block.split("  - {type: mcp")[0] + block[block.index("tools_policy:") :]
    spec = load(tmp_path, block, "policy")
    openai_server.script(text("done"))

    async def turn() -> None:
        async with Agent(spec, RunOptions()) as agent:
            await agent.answer("hi")

    asyncio.run(turn())

    offered = [t["function"]["name"] for t in openai_server.requests[0].body["tools"]]
    assert offered == ["lookup"]
