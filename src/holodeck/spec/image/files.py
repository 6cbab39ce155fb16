"""Documents of an agent image: config.yaml, tools/mcp/*.yaml, SKILL.md frontmatter.

Keys beyond spec_version 1 are reported as warnings (errors with `--strict`) by the
loader, which drops them before validating against these models.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, StringConstraints, model_validator

from holodeck.spec.models.base import NonEmpty, PositiveFloat, Strict, ToolName
from holodeck.spec.models.builtin_tools import BuiltinConfig
from holodeck.spec.models.call_guards import FunctionPolicy, ToolRules
from holodeck.spec.models.controls import Approval, Limits, ToolsPolicy
from holodeck.spec.models.guardrails import Guardrails
from holodeck.spec.models.modalities import InputModality, OutputModality
from holodeck.spec.models.model_settings import ModelCost
from holodeck.spec.models.optimizer import OptimizerSettings
from holodeck.spec.models.settings import MemorySettings
from holodeck.spec.models.tools import APPROVAL_HELP, ApprovalMode, RetryPolicy, check_http_url

SKILL_NAME_PATTERN = r"^[a-z0-9-]{1,64}$"


class LlmConfig(Strict):
    model: NonEmpty = Field(description="provider/model, e.g. openai/gpt-4o.")
    max_completion_tokens: Annotated[int, Field(gt=0)] | None = None
    reasoning_effort: Literal["low", "medium", "high"] | None = None
    # Omnigent passes other llm keys to the model call; these are the ones that exist here.
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    top_p: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    max_tokens: Annotated[int, Field(gt=0)] | None = Field(
        default=None, description="The older name of max_completion_tokens."
    )
    fallback_models: list[NonEmpty] = Field(
        default_factory=list,
        description="`provider/model`s that take over, in order, when `model` fails in a "
        "way retrying cannot fix.",
    )
    cost: ModelCost | None = Field(
        default=None,
        description="Prices `model` per million tokens (a HoloDeck extension), as in "
        "agent.yaml's `model.cost`.",
    )

    @model_validator(mode="after")
    def _one_token_limit(self) -> LlmConfig:
        if self.max_tokens is not None and self.max_completion_tokens is not None:
            raise ValueError("give `max_completion_tokens` or `max_tokens`, not both")
        return self


class Modalities(Strict):
    input: Annotated[list[InputModality], Field(min_length=1)] = Field(
        default_factory=lambda: list[InputModality](["text"])
    )
    output: Annotated[list[OutputModality], Field(min_length=1)] = Field(
        default_factory=lambda: list[OutputModality](["text"])
    )


class Interaction(Strict):
    conversational: bool = True
    modalities: Modalities = Field(default_factory=Modalities)


class ToolsBlock(Strict):
    agents: list[ToolName] = Field(default_factory=list)
    builtins: list[Literal["web_search", "web_fetch"] | BuiltinConfig] = Field(default_factory=list)
    timeout: PositiveFloat | None = Field(default=None, description="Default per-call timeout.")
    retry: RetryPolicy | None = None


class ImageConfig(Strict):
    spec_version: Literal[1]
    name: NonEmpty | None = None
    description: str | None = None
    instructions: str | None = None
    prompt: str | None = Field(default=None, description="The older name of `instructions`.")
    llm: LlmConfig | None = None
    interaction: Interaction = Field(default_factory=Interaction)
    tools: ToolsBlock = Field(default_factory=ToolsBlock)
    params: dict[str, Any] = Field(default_factory=dict)
    optimizer: OptimizerSettings | None = Field(
        default=None, description="What `holodeck test optimize` searches (a HoloDeck extension)."
    )
    limits: Limits | None = Field(
        default=None, description="Spend caps per turn, per session, per API key per day."
    )
    memory: MemorySettings | None = Field(
        default=None,
        description="Sessions and long-term memory (`memory.long_term`), as agent.yaml's "
        "(a HoloDeck extension); over config.yaml's `memory:`.",
    )
    tools_policy: ToolsPolicy | None = Field(
        default=None, description="Which of the agent's tools the model is offered."
    )
    guardrails: Guardrails | None = Field(
        default=None,
        description="Checks on each user message and each answer (Omnigent's request and "
        "response prompt policies are read into it).",
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
        "allow, deny or ask a person about each tool call, and may redact or withhold "
        "results (Omnigent's `type: function` policies are read into it).",
    )


class McpFile(Strict):
    """tools/mcp/<name>.yaml. The spec's transport is http; sse and stdio also work."""

    name: ToolName
    description: str | None = None
    transport: Literal["http", "sse", "stdio"]
    url: NonEmpty | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    command: NonEmpty | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    timeout: PositiveFloat | None = None
    retry: RetryPolicy | None = None
    tools: list[NonEmpty] | None = Field(
        default=None, description="Only these of the server's tools are exposed."
    )
    scope: Literal["agent", "session"] = "agent"  # a HoloDeck extension, as in agent.yaml
    approval: ApprovalMode | None = Field(
        default=None, description=APPROVAL_HELP + " (each of the server's tools)"
    )

    @model_validator(mode="after")
    def _transport_fields(self) -> McpFile:
        if self.transport == "stdio":
            if self.command is None:
                raise ValueError("transport `stdio` needs a `command`")
            if self.url is not None or self.headers:
                raise ValueError("transport `stdio` takes no `url` or `headers`")
        else:
            if self.url is None:
                raise ValueError(f"transport `{self.transport}` needs a non-empty `url`")
            check_http_url(self.url)
            if self.command is not None or self.args or self.env:
                raise ValueError("`command`, `args` and `env` need transport `stdio`")
        return self


class SkillFrontmatter(Strict):
    name: Annotated[str, StringConstraints(pattern=SKILL_NAME_PATTERN)] = Field(
        description="Lowercase letters, digits and hyphens, at most 64; the directory name."
    )
    description: Annotated[str, StringConstraints(min_length=1, max_length=1024)]
