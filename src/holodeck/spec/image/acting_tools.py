"""The tools that act in a workspace, as an image asks for them: `files`, `shell`, `code`
and `terminals` in `tools.builtins`, and Omnigent's forms:

    os_env:                      # its shell and file tools
      type: caller_process
      cwd: .                     # the workspace in chat and test
      sandbox: {type: linux_bwrap, write_paths: [build]}
    terminals:                   # named terminals, each running its command
      shell: {command: bash}
    tools:
      builtins: [{name: code, session: kept}]   # run_python, one interpreter per session

All of them load into one `WorkspaceSettings`; a form asking for what HoloDeck cannot do
(another `os_env.type`, a sandbox type other than linux_bwrap or none) is an error saying
what."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from holodeck.spec.diagnostics import FieldPath
from holodeck.spec.image.executor import Report
from holodeck.spec.models.sandbox_settings import SandboxSettings
from holodeck.spec.models.workspace_settings import (
    ACTING_TOOLS,
    ActingTool,
    CodeBuiltin,
    CodeSession,
    TerminalSettings,
    WorkspaceSettings,
)

M = TypeVar("M", bound=BaseModel)
SANDBOX_TYPES = ("linux_bwrap", "bwrap", "auto", "none")
OS_ENV_KEYS = ("type", "cwd", "sandbox")
OS_ENV_TOOLS: tuple[ActingTool, ...] = ("files", "shell")  # what Omnigent's os_env gives


def take_acting_tools(data: dict[str, Any], report: Report) -> WorkspaceSettings | None:
    """Take `os_env`, `terminals` and the acting names of `tools.builtins` out of `data`
    (config.yaml before validation) and read them into one `WorkspaceSettings`."""
    tools: list[ActingTool] = []
    cwd: str | None = None
    sandbox = SandboxSettings()
    os_env = data.pop("os_env", None)
    if os_env is True:
        os_env = {}
        tools.extend(OS_ENV_TOOLS)
    if isinstance(os_env, dict) and os_env:
        tools.extend(OS_ENV_TOOLS)
        cwd, sandbox = _read_os_env(os_env, report)
    elif os_env not in (None, False, {}):
        report(
            ("os_env",),
            f"`os_env: {os_env}` is not a form HoloDeck reads",
            "write `os_env: {type: caller_process, cwd: ., sandbox: {type: linux_bwrap}}`",
        )
    terminals = _read_terminals(data.pop("terminals", None), report)
    if terminals is not None:
        tools.append("terminals")
    listed, code_session = _take_from_builtins(data, report)
    tools.extend(listed)
    if not tools:
        return None
    unique = tuple(dict.fromkeys(tools))
    return WorkspaceSettings(
        tools=unique,
        sandbox=sandbox,
        path=cwd,
        terminals=terminals or {},
        code_session=code_session,
    )


def _read_os_env(os_env: dict[str, Any], report: Report) -> tuple[str | None, SandboxSettings]:
    kind = os_env.get("type", "caller_process")
    if kind != "caller_process":
        report(
            ("os_env", "type"),
            f"os_env type `{kind}` is not offered: HoloDeck runs the tools beside the agent, "
            "in a sandbox on this machine",
            "write `type: caller_process` (the commands run in bubblewrap unless "
            "`sandbox: {type: none}`)",
        )
    for key in os_env:
        if key not in OS_ENV_KEYS:
            report(
                ("os_env", key),
                f"`os_env.{key}` is not read here",
                f"os_env takes {', '.join(OS_ENV_KEYS)}; remove `{key}`",
            )
    cwd = os_env.get("cwd")
    if cwd is not None and not (isinstance(cwd, str) and cwd):
        report(("os_env", "cwd"), "`os_env.cwd` must be a folder's path", "e.g. `cwd: .`")
        cwd = None
    given = os_env.get("sandbox") or {}
    if isinstance(given, dict) and given.get("type", "auto") not in SANDBOX_TYPES:
        report(
            ("os_env", "sandbox", "type"),
            f"sandbox type `{given['type']}` is not offered: HoloDeck walls commands in "
            "with bubblewrap on Linux",
            "write `type: linux_bwrap` (or `auto`); `none` runs commands without walls",
        )
        return cwd, SandboxSettings()
    sandbox = _model(SandboxSettings, given, ("os_env", "sandbox"), report)
    return cwd, sandbox or SandboxSettings()


def _read_terminals(value: Any, report: Report) -> dict[str, TerminalSettings] | None:
    if value in (None, False, {}):
        return None
    if not isinstance(value, dict):
        report(
            ("terminals",),
            "`terminals` must map names to terminals",
            "e.g. `terminals: {shell: {command: bash}}`",
        )
        return None
    terminals: dict[str, TerminalSettings] = {}
    for name, entry in value.items():
        read = _model(TerminalSettings, entry or {}, ("terminals", name), report)
        if read is not None:
            terminals[str(name)] = read
    return terminals


def _take_from_builtins(
    data: dict[str, Any], report: Report
) -> tuple[list[ActingTool], CodeSession]:
    block = data.get("tools")
    if not isinstance(block, dict) or not isinstance(block.get("builtins"), list):
        return [], "fresh"
    found: list[ActingTool] = []
    kept: list[Any] = []
    code_session: CodeSession = "fresh"
    for index, entry in enumerate(block["builtins"]):
        name = entry.get("name") if isinstance(entry, dict) else entry
        if name not in ACTING_TOOLS:
            kept.append(entry)
            continue
        found.append(name)
        if not isinstance(entry, dict) or set(entry) == {"name"}:
            continue
        where: FieldPath = ("tools", "builtins", index)
        if name == "code":
            code = _model(CodeBuiltin, entry, where, report)
            code_session = code.session if code is not None else code_session
        else:
            report(where, f"builtin `{name}` takes no settings", f"write `- {name}`")
    data["tools"] = {**block, "builtins": kept}
    return found, code_session


def _model(kind: type[M], value: Any, where: FieldPath, report: Report) -> M | None:
    """`value` read as `kind`, each problem reported at its place under `where`."""
    try:
        return kind.model_validate(value)
    except ValidationError as error:
        for problem in error.errors():
            place = (*where, *(str(part) for part in problem["loc"]))
            report(place, problem["msg"].removeprefix("Value error, "), None)
        return None
