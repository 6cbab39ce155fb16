"""The Claude Agent SDK's options for one turn, from the `claude:` block: the CLI's
tools, permission mode, sub-agents, working directory and (allow-listed) environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holodeck.config.child_env import child_environment
from holodeck.spec.models.claude_settings import ClaudeSettings

# what the CLI would otherwise send to Anthropic besides model requests (telemetry, update
# checks, session titles), and the deferral of MCP tools behind a search tool
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "ENABLE_TOOL_SEARCH": "false",
    # a sub-agent answers within the turn that asked it, not in a later one
    "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1",
}
_PERMISSION_MODES = {"manual": "default", "acceptAll": "bypassPermissions"}
# what each auth provider passes to the CLI, besides the allow-listed environment
_AUTH_FLAGS = {
    "bedrock": "CLAUDE_CODE_USE_BEDROCK",
    "vertex": "CLAUDE_CODE_USE_VERTEX",
    "foundry": "CLAUDE_CODE_USE_FOUNDRY",
}
_AUTH_PREFIXES = {
    "api_key": ("ANTHROPIC_",),
    "oauth_token": ("CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL"),
    "bedrock": ("AWS_", "ANTHROPIC_BEDROCK_", "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST"),
    "vertex": ("ANTHROPIC_VERTEX_", "CLOUD_ML_REGION", "GOOGLE_", "VERTEX_REGION_"),
    "foundry": ("ANTHROPIC_FOUNDRY_",),
}
SERVER_NAME = "holodeck"  # the in-process MCP server: the CLI sees `mcp__holodeck__<tool>`


@dataclass(frozen=True)
class HarnessPlan:
    """What every turn of one agent shares."""

    claude: ClaudeSettings
    model: str
    instructions: str | None
    root: Path
    env: Mapping[str, str]  # the agent's environment (process, .env)
    api_key: str | None
    base_url: str | None
    served: bool  # answering others (a server): shell and file tools only when allowed
    served_tools: frozenset[str]  # deployment.harness_tools

    def working_directory(self, session: str) -> Path:
        own = self.claude.working_directory
        path = self.root / own if own else self.root / ".holodeck" / "work" / session
        path.mkdir(parents=True, exist_ok=True)
        return path.resolve()

    @property
    def state_directory(self) -> Path:
        """The CLI's configuration directory (its transcripts), kept beside the agent."""
        return self.root / ".holodeck" / "claude"

    def has_transcript(self, session: str) -> bool:
        """Whether the CLI can resume `session` here (with the user's own Claude Code
        settings, the CLI's directory is theirs: assumed so)."""
        if self.claude.setting_sources:
            return True
        return any((self.state_directory / "projects").glob(f"*/{session}.jsonl"))

    def builtin_tools(self) -> list[str]:
        """The CLI's own tools this agent is given (none unless turned on)."""
        return self.claude.builtin_tools(
            bash=self._served_allows("bash"), files=self._served_allows("files")
        )

    def _served_allows(self, kind: str) -> bool:
        return not self.served or kind in self.served_tools

    def options(self, session: str, resume: bool, mcp_server: Any, tool_names: list[str]) -> Any:
        from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions

        c = self.claude
        ours = [f"mcp__{SERVER_NAME}__{name}" for name in tool_names]
        builtin = self.builtin_tools()
        # the tools the agent was given are used without asking; any other is refused
        # (in `default` mode nobody is there to ask)
        allowed = [*ours, *(t for t in builtin if t != "Bash"), *(c.allowed_tools or [])]
        if "Bash" in builtin:
            allowed.append("Bash")
        disallowed = [*(c.disallowed_tools or [])]
        if c.bash is not None:
            disallowed += [f"Bash({command}:*)" for command in c.bash.excluded_commands]
        agents = {
            # in the foreground: the turn ends with the sub-agent's answer in it
            name: AgentDefinition(
                description=a.description,
                prompt=a.prompt,
                tools=a.tools,
                model=a.model,
                background=False,
            )
            for name, a in (c.agents or {}).items()
        }
        thinking = c.extended_thinking
        sources = c.setting_sources or []
        if "all" in sources:
            sources = ["user", "project", "local"]
        cwd = self.working_directory(session)
        return ClaudeAgentOptions(
            tools=builtin,
            allowed_tools=allowed,
            disallowed_tools=disallowed,
            system_prompt=self.instructions or "",
            mcp_servers={SERVER_NAME: mcp_server} if tool_names else {},
            strict_mcp_config=True,
            permission_mode=self.permission_mode(),  # type: ignore[arg-type]
            resume=session if resume else None,
            session_id=None if resume else session,
            max_turns=c.max_turns,
            max_budget_usd=c.max_budget_usd,
            model=self.model,
            fallback_model=c.fallback_model,
            cwd=str(cwd),
            env=self.environment(),
            include_partial_messages=True,
            agents=agents or None,
            setting_sources=sources,  # type: ignore[arg-type]
            effort=c.effort,
            max_thinking_tokens=thinking.budget_tokens if thinking and thinking.enabled else None,
        )

    def permission_mode(self) -> str:
        """The SDK's mode; an unchecked one only when the definition acknowledged it."""
        c = self.claude
        mode = _PERMISSION_MODES.get(c.permission_mode, c.permission_mode)
        if mode == "bypassPermissions" and not c.i_understand_this_is_unsafe:
            return "default"
        return mode

    def environment(self) -> dict[str, str]:
        """The CLI's environment: the allow-listed variables, the credentials its auth
        provider reads, and nothing else. The SDK starts the CLI with this process's
        environment under these values, so every other variable is blanked."""
        provider = self.claude.auth_provider or "api_key"
        own = {k: v for k, v in self.env.items() if k.startswith(_AUTH_PREFIXES[provider])}
        if provider in _AUTH_FLAGS:
            own[_AUTH_FLAGS[provider]] = "1"
        if self.api_key:
            own["ANTHROPIC_API_KEY"] = self.api_key
        if self.base_url:
            own["ANTHROPIC_BASE_URL"] = self.base_url
        sources = self.claude.setting_sources or []
        if not sources:  # the user's own Claude Code settings stay out
            state = self.state_directory
            state.mkdir(parents=True, exist_ok=True)
            own["CLAUDE_CONFIG_DIR"] = str(state.resolve())
        child = child_environment(self.env, {**own, **QUIET})
        blanked = {name: "" for name in os.environ if name not in child}
        return {**blanked, **child}
