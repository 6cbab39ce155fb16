"""agent.yaml's `claude:` block: run the agent inside the Claude Agent SDK (the Claude
Code CLI runs the model loop with its own tools; HoloDeck's tools are offered to it).

Field names and meanings follow the shipped HoloDeck's `claude:` block. Every built-in
capability is off unless the block turns it on."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from holodeck.spec.models.base import NonEmpty, Strict

# the shipped HoloDeck's names for the SDK's permission modes, and the SDK's own
PermissionMode = Literal[
    "manual", "default", "acceptEdits", "acceptAll", "bypassPermissions", "plan", "auto"
]
AuthProvider = Literal["api_key", "oauth_token", "bedrock", "vertex", "foundry"]
SettingSource = Literal["user", "project", "local", "all"]


class ExtendedThinking(Strict):
    enabled: bool = False
    budget_tokens: Annotated[int, Field(ge=1000, le=100_000)] = 10_000


class BashSettings(Strict):
    enabled: bool = False
    excluded_commands: list[NonEmpty] = Field(
        default_factory=list, description="Commands refused (`Bash(rm:*)`-style rules)."
    )


class FileSystemSettings(Strict):
    read: bool = False
    write: bool = False
    edit: bool = False


class ClaudeSubagent(Strict):
    """A sub-agent the harness can hand a task to (the CLI's Task tool)."""

    description: NonEmpty
    prompt: NonEmpty
    tools: list[NonEmpty] | None = Field(
        default=None, description="The tools it may use; omitted: all of its parent's."
    )
    model: Literal["sonnet", "opus", "haiku", "inherit"] | None = None


class ClaudeSettings(Strict):
    """`claude:`: the Claude Agent SDK harness and what its loop may do."""

    permission_mode: PermissionMode = Field(
        default="default",
        description="`default`/`manual`: tools not allowed are refused (nobody is asked); "
        "`acceptEdits`; `plan`; `auto` (the SDK's classifier approves each call); "
        "`bypassPermissions`/`acceptAll` (needs i_understand_this_is_unsafe).",
    )
    i_understand_this_is_unsafe: bool = False
    max_turns: Annotated[int, Field(ge=1)] | None = None
    extended_thinking: ExtendedThinking | None = None
    effort: Literal["low", "medium", "high", "max"] | None = None
    web_search: bool = Field(default=False, description="The WebSearch and WebFetch tools.")
    bash: BashSettings | None = None
    file_system: FileSystemSettings | None = None
    agents: dict[str, ClaudeSubagent] | None = None
    allowed_tools: list[NonEmpty] | None = Field(
        default=None, description="Tools used without asking (e.g. `Bash(git:*)`)."
    )
    disallowed_tools: list[NonEmpty] | None = Field(
        default=None, description="Tools never used; over allowed_tools."
    )
    max_budget_usd: Annotated[float, Field(gt=0)] | None = None
    fallback_model: NonEmpty | None = None
    working_directory: NonEmpty | None = Field(
        default=None,
        description="Where the harness's shell and file tools work, relative to agent.yaml; "
        "default a fresh .holodeck/work/<session> per session.",
    )
    setting_sources: list[SettingSource] | None = Field(
        default=None,
        description="Claude Code settings files read (user, project, local, all); default none.",
    )
    auth_provider: AuthProvider | None = Field(
        default=None,
        description="From `model.auth_provider`: API key, Claude subscription token "
        "(CLAUDE_CODE_OAUTH_TOKEN), Bedrock, Vertex AI or Azure AI Foundry.",
    )

    def builtin_tools(self, *, bash: bool = True, files: bool = True) -> list[str]:
        """The CLI's own tools these settings turn on (none unless a field does);
        `bash`/`files`: whether where the agent runs allows those kinds at all."""
        tools: list[str] = []
        if bash and self.bash is not None and self.bash.enabled:
            tools.append("Bash")
        if files and self.file_system is not None:
            tools += ["Read", "Glob", "Grep"] if self.file_system.read else []
            tools += ["Write"] if self.file_system.write else []
            tools += ["Edit"] if self.file_system.edit else []
        if self.web_search:
            tools += ["WebSearch", "WebFetch"]
        if self.agents:
            tools.append("Task")
        return tools

    @model_validator(mode="after")
    def _unsafe_acknowledged(self) -> ClaudeSettings:
        if self.permission_mode in ("bypassPermissions", "acceptAll") and (
            not self.i_understand_this_is_unsafe
        ):
            raise ValueError(
                f"permission_mode `{self.permission_mode}` lets the harness run any tool "
                "without a check; add `i_understand_this_is_unsafe: true` to mean it"
            )
        if (
            self.setting_sources
            and "all" in self.setting_sources
            and (len(self.setting_sources) > 1)
        ):
            raise ValueError("setting_sources: `all` cannot be combined with other values")
        return self
