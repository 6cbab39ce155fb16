"""agent.yaml's `builtins:`, `sandbox:` and `workspace:`: the web tools kept as
`BuiltinConfig`s, the tools that act in a workspace gathered into one `WorkspaceSettings`.

    builtins: [web_fetch, files, shell, {name: code, session: kept}]
    sandbox: {write_paths: [build]}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck.spec.diagnostics import FieldPath
from holodeck.spec.models.builtin_tools import BuiltinConfig
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.sandbox_settings import SandboxSettings
from holodeck.spec.models.workspace_settings import (
    ACTING_TOOLS,
    ActingTool,
    CodeBuiltin,
    CodeSession,
    WorkspaceSettings,
)
from holodeck.spec.references import References

if TYPE_CHECKING:
    from holodeck.spec.agent_yaml.agent_file import AgentFile


def read_builtins(
    agent: AgentFile, checks: References
) -> tuple[tuple[BuiltinConfig, ...], WorkspaceSettings | None]:
    """The web builtins and the workspace settings `agent` asks for; problems reported."""
    web: list[BuiltinConfig] = []
    acting: list[ActingTool] = []
    code_session: CodeSession = "fresh"
    seen: set[str] = set()
    taken = {tool.name for tool in agent.tools}
    for index, entry in enumerate(agent.builtins):
        where: FieldPath = ("builtins", index)
        name = entry if isinstance(entry, str) else entry.name
        if name in seen:
            checks.error(where, f"builtin `{name}` is listed twice", "keep one of them")
            continue
        seen.add(name)
        if name in taken:
            checks.error(
                where,
                f"builtin `{name}` has the name of a tool in `tools:`",
                "rename the tool, or drop the builtin",
            )
            continue
        if name in ACTING_TOOLS:
            acting.append(name)
            if isinstance(entry, CodeBuiltin):
                code_session = entry.session
            continue
        if isinstance(entry, CodeBuiltin):  # its name is `code`, taken above
            continue
        builtin = BuiltinConfig(name=entry) if isinstance(entry, str) else entry
        if _search_needs_provider(builtin, agent.model):
            checks.error(
                where,
                "web_search needs `search_provider` (google, perplexity or nimble) with an "
                "api_key unless the model is an OpenAI model",
                "use `{name: web_search, search_provider: perplexity, api_key: ...}`",
            )
            continue
        web.append(builtin)
    if not acting:
        for key in ("sandbox", "workspace"):
            if getattr(agent, key) is not None:
                checks.error(
                    (key,),
                    f"`{key}` applies to the tools that act in a workspace, and none is listed",
                    "add `files`, `shell`, `code` or `terminals` to `builtins:`, or remove "
                    f"`{key}`",
                )
        return tuple(web), None
    if agent.workspace is not None:
        checks.path(("workspace",), agent.workspace, "workspace folder", kind="directory")
    settings = WorkspaceSettings(
        tools=tuple(acting),
        sandbox=agent.sandbox or SandboxSettings(),
        path=agent.workspace,
        code_session=code_session,
    )
    return tuple(web), settings


def _search_needs_provider(builtin: BuiltinConfig, model: ModelSettings) -> bool:
    # without a provider, web_search is OpenAI's own search, run by its Responses API
    return (
        builtin.name == "web_search"
        and builtin.search_provider is None
        and model.provider != "openai"
    )
