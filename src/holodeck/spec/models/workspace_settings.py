"""The tools that act on a machine (`files`, `shell`, `code`, `terminals`), where they act
(the workspace) and how they are walled in (`sandbox:`).

agent.yaml lists them among its builtins, beside `web_search` and `web_fetch`:

    builtins: [files, shell, {name: code, session: kept}, terminals]
    sandbox: {type: auto, write_paths: [build]}
    workspace: project          # chat and test; default the agent's folder

An image lists them in `tools.builtins`, or asks for them as Omnigent does (`os_env`,
`terminals`); both load into one `WorkspaceSettings`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from holodeck.spec.models.base import NonEmpty, Strict
from holodeck.spec.models.sandbox_settings import SandboxSettings

ActingTool = Literal["files", "shell", "code", "terminals"]
CodeSession = Literal["fresh", "kept"]
ACTING_TOOLS: tuple[ActingTool, ...] = ("files", "shell", "code", "terminals")
WEB_BUILTINS = ("web_search", "web_fetch")


class TerminalSettings(Strict):
    """One named terminal an Omnigent image declares (`terminals: {shell: {command: bash}}`)."""

    command: NonEmpty = Field(default="sh", description="The shell the terminal runs.")


class CodeBuiltin(Strict):
    """The `code` builtin with its setting: `{name: code, session: kept}`."""

    name: Literal["code"]
    session: CodeSession = Field(
        default="fresh",
        description="`fresh`: each run_python call runs in a new interpreter; `kept`: one "
        "interpreter per conversation keeps the names each call defines.",
    )


class WorkspaceSettings(Strict):
    """The acting tools an agent is given, and where they act."""

    tools: tuple[ActingTool, ...] = Field(description="Which acting tools the model is offered.")
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    path: NonEmpty | None = Field(
        default=None,
        description="The workspace in chat and test, relative to the agent's folder (default: "
        "the agent's folder). A server gives each session a folder of its own instead.",
    )
    code_session: CodeSession = Field(
        default="fresh",
        description="How run_python runs: a fresh interpreter per call, or one kept per "
        "conversation.",
    )
    terminals: dict[str, TerminalSettings] = Field(
        default_factory=dict,
        description="Named terminals and their shells; empty: any name opens `sh`.",
    )


# The tools the model sees for each acting tool (runtime/toolsets/_workspace.py offers them).
TOOL_NAMES: dict[str, tuple[str, ...]] = {
    "files": ("read_file", "write_file", "edit_file", "list_folder", "glob_files", "grep_files"),
    "shell": ("shell",),
    "code": ("run_python",),
    "terminals": ("terminal_open", "terminal_write", "terminal_read", "terminal_close"),
}


def acting_tool_names(workspace: WorkspaceSettings | None) -> tuple[str, ...]:
    """The names the model is offered for `workspace`'s tools."""
    if workspace is None:
        return ()
    return tuple(name for tool in workspace.tools for name in TOOL_NAMES[tool])


def builtin_tool_names(builtins: list[str]) -> list[str]:
    """The tool names of builtins listed by name: an acting tool stands for its tools."""
    return [name for builtin in builtins for name in TOOL_NAMES.get(builtin, (builtin,))]
