"""`AgentSpec`: the one typed, immutable agent that both formats load into."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from holodeck.spec.diagnostics import Diagnostic
from holodeck.spec.models.builtin_tools import BuiltinConfig
from holodeck.spec.models.call_guards import FunctionPolicy, ToolRule
from holodeck.spec.models.cases import TestCase
from holodeck.spec.models.claude_settings import ClaudeSettings
from holodeck.spec.models.controls import Approval, Limits, ToolsPolicy
from holodeck.spec.models.evaluations import EvaluationConfig
from holodeck.spec.models.guardrails import Guardrails
from holodeck.spec.models.handoffs import back_tool
from holodeck.spec.models.modalities import InputModality, OutputModality
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.network_settings import NetworkSettings
from holodeck.spec.models.observability_settings import ObservabilitySettings
from holodeck.spec.models.optimizer import OptimizerSettings
from holodeck.spec.models.prompt_version import PromptVersion
from holodeck.spec.models.settings import (
    DeploymentSettings,
    ExecutionSettings,
    LoggingSettings,
    MemorySettings,
)
from holodeck.spec.models.tools import (
    A2ATool,
    AgentTool,
    FunctionTool,
    HierarchicalDocumentTool,
    McpTool,
    PromptTool,
    TypeScriptTool,
    VectorstoreTool,
)
from holodeck.spec.models.workspace_settings import WorkspaceSettings

Tool = Annotated[
    FunctionTool
    | TypeScriptTool
    | PromptTool
    | VectorstoreTool
    | HierarchicalDocumentTool
    | McpTool
    | AgentTool
    | A2ATool,
    Field(discriminator="type"),
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)


class SkillSpec(_Frozen):
    """A skill: listed in the system prompt by name and description, loaded on demand."""

    name: str
    description: str
    directory: Path
    body: str
    resources: tuple[str, ...] = Field(
        default=(), description="Files under references/, scripts/, assets/ (relative)."
    )


class InteractionSpec(_Frozen):
    conversational: bool = True
    input_modalities: tuple[InputModality, ...] = ("text",)
    output_modalities: tuple[OutputModality, ...] = ("text",)


class AgentSpec(_Frozen):
    """Everything needed to run an agent; paths in tools are relative to `root`."""

    format: Literal["agent.yaml", "image"]
    root: Path = Field(description="Directory the agent's relative paths start from.")
    source: Path = Field(description="agent.yaml, or the image's config.yaml.")
    name: str
    description: str | None = None
    author: str | None = None
    model: ModelSettings | None = Field(
        default=None, description="None when an image has no llm block: pass --model."
    )
    instructions: str | None = None
    instructions_file: Path | None = None
    prompt_version: PromptVersion | None = Field(
        default=None,
        description="agent.yaml: the instructions' front matter `version`, or a digest.",
    )
    response_format: dict[str, Any] | None = None
    tools: tuple[Tool, ...] = ()
    builtins: tuple[BuiltinConfig, ...] = ()
    workspace: WorkspaceSettings | None = Field(
        default=None, description="The acting tools (files, shell, code, terminals), if any."
    )
    skills: tuple[SkillSpec, ...] = ()
    subagents: dict[str, AgentSpec] = Field(
        default_factory=dict, description="Agents callable as tools, by tool name."
    )
    handoffs: tuple[HandoffSpec, ...] = Field(
        default=(), description="Agents the conversation may be transferred to."
    )
    params: dict[str, Any] = Field(default_factory=dict)
    interaction: InteractionSpec = Field(default_factory=InteractionSpec)
    evaluations: EvaluationConfig | None = None
    test_cases: tuple[TestCase, ...] = ()
    execution: ExecutionSettings = Field(default_factory=ExecutionSettings)
    middleware: tuple[Path, ...] = Field(default=(), description="Middleware files, resolved.")
    memory: MemorySettings = Field(default_factory=MemorySettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    deployment: DeploymentSettings | None = None
    embedding_provider: ModelSettings | None = Field(
        default=None, description="Embeds for search tools without their own model."
    )
    observability: ObservabilitySettings | None = Field(
        default=None, description="agent.yaml's block over the config files', nested fields too."
    )
    network: NetworkSettings | None = Field(
        default=None,
        description="The config files' `network` blocks and agent.yaml's, together.",
    )
    optimizer: OptimizerSettings | None = None
    limits: Limits | None = Field(
        default=None, description="The definition's caps over the config files'."
    )
    tools_policy: ToolsPolicy | None = None
    guardrails: Guardrails | None = None
    approval: Approval | None = None
    tool_rules: dict[str, ToolRule] = Field(default_factory=dict)
    tool_policies: tuple[FunctionPolicy, ...] = ()
    claude: ClaudeSettings | None = Field(
        default=None, description="Run inside the Claude Agent SDK harness (docs/harnesses.md)."
    )
    harness: str | None = Field(
        default=None,
        description="An image's `executor.config.harness` other than a plain model loop "
        "(`claude-sdk`, `codex`, ...); None: HoloDeck's own loop.",
    )
    warnings: tuple[Diagnostic, ...] = ()

    def resolve(self, relative: str) -> Path:
        """A path from the definition, resolved against the agent's directory."""
        return (self.root / relative).resolve()

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]

    def handoff(self, name: str) -> HandoffSpec | None:
        """The handoff called `name`, if the agent declares one."""
        return next((h for h in self.handoffs if h.name == name), None)


class HandoffSpec(_Frozen):
    """An agent the conversation may be transferred to: the model is offered `tool`;
    once called, `agent` answers the session (its instructions, tools and model) until
    it hands back."""

    name: str = Field(description="agent.yaml's `name`; an image's inline tool key.")
    tool: str = Field(description="The tool the model sees.")
    description: str | None = None
    agent: AgentSpec


AgentSpec.model_rebuild()


def handoff_tools(
    name: str, handoffs: Sequence[HandoffSpec]
) -> tuple[frozenset[str], tuple[str, ...]]:
    """The tools a conversation with the agent `name` may call once handed over (a test
    case may expect them): the transfer tools, the targets' own tools and their
    hand-back tools; and the targets' MCP servers (whose tools are `<server>_<tool>`)."""
    names: set[str] = set()
    servers: list[str] = []
    for handoff in handoffs:
        target = handoff.agent
        names |= {handoff.tool, back_tool(name), *target.tool_names, *target.subagents}
        names |= {b.name for b in target.builtins} | ({"load_skill"} if target.skills else set())
        servers += [t.name for t in target.tools if isinstance(t, McpTool)]
        more, more_servers = handoff_tools(target.name, target.handoffs)
        names |= more
        servers += more_servers
    return frozenset(names), tuple(servers)
