"""Every field a definition accepts reaches the AgentSpec: the loader drops nothing.

The lists below must name every field of the schema; a new field without an entry
here fails the enumeration test, so it cannot be accepted and then forgotten.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.spec.agent_file import AgentFile
from holodeck.spec.image_files import ImageConfig
from holodeck.spec.model_settings import ModelSettings
from yaml_dump import dump, minimal

AGENT_YAML_SAMPLES: dict[str, Any] = {
    "description": "Answers questions.",
    "author": "Team",
    "response_format": {"type": "object", "properties": {"a": {"type": "string"}}},
    "tools": [{"type": "function", "name": "f", "file": "t.py", "function": "f"}],
    "skills": ["skills/helper"],
    "evaluations": {"metrics": [{"metric": "bleu", "threshold": 0.2}]},
    "test_cases": [{"input": "hi"}],
    "execution": {"max_tool_iterations": 3},
    "middleware": ["hooks.py"],
    "memory": {"max_messages": 5},
    "logging": {"log_level": "DEBUG"},
    "deployment": {"port": 9001},
}
MODEL_SAMPLES: dict[str, Any] = {
    "temperature": 0.9,
    "max_tokens": 77,
    "top_p": 0.5,
    "reasoning_effort": "high",
    "endpoint": "http://127.0.0.1:1/v1",
    "api_key": "sk-x",
    "api_version": "2024-10-21",
}
IMAGE_SAMPLES: dict[str, str] = {
    "name": "name: other\n",
    "description": "description: Does things.\n",
    "instructions": "instructions: Be brief.\n",
    "llm": "llm: {model: anthropic/claude-x, max_completion_tokens: 9, reasoning_effort: low}\n",
    "interaction": "interaction: {conversational: false, modalities: {input: [text, image]}}\n",
    "tools": "tools: {builtins: [web_fetch], timeout: 3}\n",
    "params": "params: {k: 1}\n",
}
FILES = {
    "t.py": "def f(x: str) -> str:\n    return x\n",
    "hooks.py": "def before_tool(call):\n    return None\n",
    "skills/helper/SKILL.md": "---\nname: helper\ndescription: Helps.\n---\nBody\n",
}


def test_every_field_is_enumerated() -> None:
    required = {"name", "model", "instructions"}
    assert set(AgentFile.model_fields) == required | set(AGENT_YAML_SAMPLES)
    assert set(ModelSettings.model_fields) == {"provider", "name"} | set(MODEL_SAMPLES)
    assert set(ImageConfig.model_fields) == {"spec_version"} | set(IMAGE_SAMPLES)


@pytest.mark.parametrize("field", list(AGENT_YAML_SAMPLES))
def test_agent_yaml_field_changes_the_spec(write: Write, field: str) -> None:
    baseline = load_agent(write({"agent.yaml": dump(minimal()), **FILES}))
    data = minimal()
    data[field] = AGENT_YAML_SAMPLES[field]
    changed = load_agent(write({"agent.yaml": dump(data), **FILES}))
    assert _comparable(changed) != _comparable(baseline)


@pytest.mark.parametrize("field", list(MODEL_SAMPLES))
def test_model_field_changes_the_spec(write: Write, field: str) -> None:
    data = minimal()
    data["model"] = {**data["model"], field: MODEL_SAMPLES[field]}
    spec = load_agent(write({"agent.yaml": dump(data)}))
    assert spec.model is not None
    value = getattr(spec.model, field)
    value = value.get_secret_value() if hasattr(value, "get_secret_value") else value
    assert value == MODEL_SAMPLES[field]


@pytest.mark.parametrize("field", list(IMAGE_SAMPLES))
def test_image_field_changes_the_spec(write: Write, field: str) -> None:
    base = "spec_version: 1\n"
    if field != "llm":
        base += "llm: {model: openai/gpt-4o}\n"
    baseline = load_agent(write({"config.yaml": base}))
    changed = load_agent(write({"config.yaml": base + IMAGE_SAMPLES[field]}))
    assert _comparable(changed) != _comparable(baseline)


def _comparable(spec: Any) -> dict[str, Any]:
    """The spec without where it was loaded from (an image's default name is its directory)."""
    dumped: dict[str, Any] = spec.model_dump(exclude={"root", "source", "instructions_file"})
    if dumped["name"] == spec.root.name:
        dumped["name"] = "<directory name>"
    return dumped
