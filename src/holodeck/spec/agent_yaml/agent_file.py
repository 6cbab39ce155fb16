"""The agent.yaml document: what a user may write, exactly (unknown keys are errors)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, model_validator

from holodeck.spec.compat.model import translate_backend_blocks
from holodeck.spec.models.base import NonEmpty, Strict
from holodeck.spec.models.builtin_tools import BuiltinConfig
from holodeck.spec.models.call_guards import FunctionPolicy, ToolRules
from holodeck.spec.models.cases import TestCase
from holodeck.spec.models.claude_settings import ClaudeSettings
from holodeck.spec.models.controls import Approval, Limits, ToolsPolicy
from holodeck.spec.models.evaluations import EvaluationConfig
from holodeck.spec.models.guardrails import Guardrails
from holodeck.spec.models.handoffs import HandoffEntry
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.network_settings import NetworkSettings
from holodeck.spec.models.observability_settings import ObservabilitySettings
from holodeck.spec.models.optimizer import OptimizerSettings
from holodeck.spec.models.sandbox_settings import SandboxSettings
from holodeck.spec.models.settings import (
    DeploymentSettings,
    ExecutionSettings,
    LoggingSettings,
    MemorySettings,
)
from holodeck.spec.models.tools import ToolDefinition
from holodeck.spec.models.workspace_settings import ActingTool, CodeBuiltin


class Instructions(Strict):
    """The system prompt: a file (relative to agent.yaml) or inline text."""

    file: NonEmpty | None = None
    inline: NonEmpty | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Instructions:
        if (self.file is None) == (self.inline is None):
            raise ValueError("give exactly one of `file` or `inline`")
        return self


def _builtin_kind(value: Any) -> str:
    # a mapping is told by its name, so an error speaks of the builtin it names
    if isinstance(value, str):
        return "named"
    name = value.get("name") if isinstance(value, dict) else getattr(value, "name", None)
    return "code" if name == "code" else "configured"


BuiltinEntry = Annotated[
    Annotated[Literal["web_search", "web_fetch", ActingTool], Tag("named")]
    | Annotated[BuiltinConfig, Tag("configured")]
    | Annotated[CodeBuiltin, Tag("code")],
    Discriminator(_builtin_kind),
]


class AgentFile(Strict):
    """Root of agent.yaml."""

    name: NonEmpty
    description: str | None = None
    author: str | None = None
    model: ModelSettings
    instructions: Instructions
    response_format: dict[str, Any] | NonEmpty | None = Field(
        default=None,
        description="JSON Schema of the final answer: inline, or a .json/.yaml file.",
    )
    tools: Annotated[list[ToolDefinition], Field(max_length=128)] = Field(default_factory=list)
    builtins: list[BuiltinEntry] = Field(
        default_factory=list,
        description="Built-in tools: web_search, web_fetch, and the tools that act in the "
        "workspace: files, shell, code (or {name: code, session: kept}), terminals "
        "(docs/tools.md).",
    )
    handoffs: Annotated[list[HandoffEntry], Field(max_length=64)] = Field(
        default_factory=list,
        description="Agents the conversation may be transferred to: the model is offered "
        "`transfer_to_<name>` for each; the target then answers until it hands back "
        "(docs/agent-yaml.md).",
    )
    sandbox: SandboxSettings | None = Field(
        default=None, description="How the shell, code and terminal tools are walled in."
    )
    workspace: NonEmpty | None = Field(
        default=None,
        description="The folder the acting tools work in, in chat and test (relative to "
        "agent.yaml; default its folder).",
    )
    skills: list[NonEmpty] = Field(
        default_factory=list, description="Skill directories (each with a SKILL.md)."
    )
    evaluations: EvaluationConfig | None = None
    test_cases: list[TestCase] = Field(default_factory=list)
    test_cases_file: NonEmpty | None = Field(
        default=None,
        description="Test cases in their own file, relative to agent.yaml: .yaml, .json, "
        ".jsonl or .csv (instead of `test_cases`).",
    )
    execution: ExecutionSettings | None = None
    middleware: list[NonEmpty] = Field(
        default_factory=list,
        description="Python files with before_tool / after_tool / on_tool_error hooks.",
    )
    memory: MemorySettings | None = None
    logging: LoggingSettings | None = None
    deployment: DeploymentSettings | None = None
    embedding_provider: ModelSettings | None = Field(
        default=None,
        description="The model (and credentials) that embeds for search tools without "
        "their own `embedding_model`, e.g. {provider: openai, name: text-embedding-3-small}.",
    )
    observability: ObservabilitySettings | None = None
    network: NetworkSettings | None = Field(
        default=None,
        description="Where web_fetch and what the model steers may go; adds to config.yaml's.",
    )
    optimizer: OptimizerSettings | None = Field(
        default=None, description="What `holodeck test optimize` searches, and its budget."
    )
    limits: Limits | None = Field(
        default=None,
        description="Spend caps per turn, per session and per API key per day; over "
        "config.yaml's, cap by cap.",
    )
    tools_policy: ToolsPolicy | None = Field(
        default=None, description="Which of the agent's tools the model is offered."
    )
    guardrails: Guardrails | None = Field(
        default=None,
        description="Checks on each user message (`input`) and each answer (`output`): "
        "block or redact.",
    )
    approval: Approval | None = Field(
        default=None,
        description="Tools (glob patterns, as in tools_policy) whose calls wait for a "
        "person to approve or deny them.",
    )
    tool_rules: ToolRules = Field(
        default_factory=dict,
        description="Per tool, glob or `re:` patterns its arguments may not (`deny`) or "
        "must (`allow`) match, checked before each call runs (docs/security.md).",
    )
    tool_policies: list[FunctionPolicy] = Field(
        default_factory=list,
        description="Python checks (`file.py:function`, built with `factory_params`) that "
        "allow, deny or ask a person about each tool call, and may redact or withhold results.",
    )
    claude: ClaudeSettings | None = Field(
        default=None,
        description="Run the agent inside the Claude Agent SDK (the Claude Code CLI): its "
        "loop, built-in tools and permission modes (docs/harnesses.md).",
    )

    @model_validator(mode="before")
    @classmethod
    def _backend_blocks(cls, data: Any) -> Any:

        return translate_backend_blocks(data)
