"""The harness model for an agent: its `claude:` settings, model name and credentials."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from typing import Any

from pydantic_ai.toolsets import AbstractToolset

from holodeck.errors import ConfigurationError, DefinitionError
from holodeck.llm.providers import effective_settings
from holodeck.runtime.harness._model import ClaudeHarnessModel
from holodeck.runtime.harness._sdk_options import HarnessPlan
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.claude_settings import ClaudeSettings

DEFAULT_MODEL = "claude-sonnet-4-5"


def harness_model(
    spec: AgentSpec,
    model_override: object,
    env: Mapping[str, str],
    instructions: str | None,
    toolsets: Callable[[], list[AbstractToolset[Any]]],
    *,
    served: bool,
) -> ClaudeHarnessModel:
    """`served`: the agent answers others over a server (`Hosting.served`), so its shell
    and file tools are off unless `deployment.harness_tools` allows them."""
    if importlib.util.find_spec("claude_agent_sdk") is None:  # the extra is not installed
        raise ConfigurationError(
            f"{spec.name} runs in the Claude Agent SDK harness, which is not installed",
            hint="pip install 'holodeck-agents[claude]', or pass --harness none to run it in "
            "HoloDeck's own loop",
        )
    if spec.response_format is not None:
        raise DefinitionError(
            f"{spec.name}: `response_format` cannot be asked of the Claude harness; remove "
            "it, or pass --harness none"
        )
    # a `--model` of another provider keeps none of the definition's endpoint or key
    own = effective_settings(
        spec.model, model_override if isinstance(model_override, str) else None
    )
    name = own.name if own is not None and own.name else DEFAULT_MODEL
    api_key = own.api_key.get_secret_value() if own is not None and own.api_key else None
    deployment = spec.deployment
    return ClaudeHarnessModel(
        HarnessPlan(
            claude=spec.claude or ClaudeSettings(),
            model=name,
            instructions=instructions,
            root=spec.root,
            env=env,
            api_key=api_key,
            base_url=own.endpoint if own is not None else None,
            served=served,
            served_tools=frozenset(deployment.harness_tools if deployment else ()),
        ),
        toolsets,
    )
