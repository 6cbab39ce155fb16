"""The tools that act in a workspace, as the model sees them: files, shell, code and
terminals (`spec.workspace.tools`), one set per conversation, its terminals and kept Python
interpreter (`code_session: kept`) closed with it.

Where the workspace is:
- a conversation given one (`Session(..., workspace=PATH)`: a test case's fresh copy);
- on a server (`Hosting.workspaces`), a folder of its own per session,
  `<workspaces>/<session id>`; folders no conversation used for the agent's
  `memory.ttl_seconds` (as long as its sessions are kept; 7 days without one) are removed
  when another is made;
- else `spec.workspace.path` under the agent's folder (default the folder itself).

A refusal (a path outside the workspace, a missing sandbox) is the call's result, one line
the model can act on; it never ends the turn.
"""

from __future__ import annotations

import contextlib
import inspect
import shlex
import shutil
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic_ai import FunctionToolset

from holodeck.errors import HoloDeckError
from holodeck.net import OutboundPolicy
from holodeck.runtime._held import Held
from holodeck.runtime._hosting import Hosting
from holodeck.sandbox import Sandbox
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.workspace_settings import WorkspaceSettings
from holodeck.tools.workspace import CommandTools, PythonSession, Terminals, WorkspaceFiles

DEFAULT_RETENTION = 7 * 24 * 3600  # a server's session workspaces, in seconds


def workspace_folder(
    spec: AgentSpec, hosting: Hosting, session_id: str | None, given: Path | None
) -> Path:
    """The folder a conversation's tools act in (made if it is a session's own)."""
    settings = spec.workspace
    assert settings is not None
    if given is not None:
        return given
    if hosting.workspaces is None:
        return (spec.root / (settings.path or ".")).resolve()
    root = hosting.workspaces.resolve()
    retention = float(spec.memory.ttl_seconds or DEFAULT_RETENTION)
    _remove_old(root, retention)
    folder = root / (session_id or uuid.uuid4().hex)
    folder.mkdir(parents=True, exist_ok=True)
    folder.touch()  # its age counts from its last conversation
    return folder


def _remove_old(root: Path, retention: float) -> None:
    if not root.is_dir():
        return
    cutoff = time.time() - retention
    for folder in root.iterdir():
        with contextlib.suppress(OSError):  # another process may be removing it too
            if folder.is_dir() and folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder)


class WorkspaceToolset(Held, FunctionToolset[Any]):
    """One conversation's acting tools in `folder`; `aclose()` (the session's end) closes
    its terminals and its kept Python interpreter, and everything started in them."""

    def __init__(
        self,
        settings: WorkspaceSettings,
        folder: Path,
        *,
        base: Path,
        hidden: list[Path],
        outbound: OutboundPolicy | None = None,
    ) -> None:
        super().__init__()
        self.folder = folder
        # with `allow_network`, commands reach only what the agent's outbound policy allows
        sandbox = Sandbox(folder, settings.sandbox, base=base, hidden=hidden, outbound=outbound)
        self._terminals: dict[tuple[str, ...], Terminals] = {}
        self._sandbox = sandbox
        self._declared = {
            name: tuple(shlex.split(t.command)) for name, t in settings.terminals.items()
        }
        if "files" in settings.tools:
            files = WorkspaceFiles(folder)
            for method in (
                files.read_file,
                files.write_file,
                files.edit_file,
                files.list_folder,
                files.glob_files,
                files.grep_files,
            ):
                self.add_function(_refusing(method), name=method.__name__, takes_ctx=False)
        commands = CommandTools(sandbox)
        if "shell" in settings.tools:
            self.add_function(_refusing(commands.shell), name="shell", takes_ctx=False)
        self._python: PythonSession | None = None
        if "code" in settings.tools and settings.code_session == "kept":
            self._python = PythonSession(sandbox)
            self.add_function(_refusing(self._python.run), name="run_python", takes_ctx=False)
        elif "code" in settings.tools:
            self.add_function(_refusing(commands.run_python), name="run_python", takes_ctx=False)
        if "terminals" in settings.tools:
            self._add_terminal_tools()

    def _terminal(self, name: str) -> Terminals:
        if self._declared and name not in self._declared:
            names = ", ".join(sorted(self._declared))
            raise _Refused(f"no terminal named {name!r} is declared; the terminals are: {names}")
        shell = self._declared.get(name, ("sh",))
        if shell not in self._terminals:
            self._terminals[shell] = Terminals(self._sandbox, shell=shell)
        return self._terminals[shell]

    def _add_terminal_tools(self) -> None:
        async def terminal_open(name: str) -> str:
            """Start a named shell in the workspace that keeps its state between calls."""
            return await self._terminal(name).open(name)

        async def terminal_write(name: str, text: str, enter: bool = True) -> str:
            """Send `text` to the named terminal (with a line break when `enter`)."""
            return await self._terminal(name).write(name, text, enter)

        async def terminal_read(name: str, wait: float = 1.0) -> str:
            """The terminal's output since the last read, waiting up to `wait` seconds."""
            return await self._terminal(name).read(name, wait)

        async def terminal_close(name: str) -> str:
            """Stop the named terminal and everything started in it."""
            return await self._terminal(name).close(name)

        for tool in (terminal_open, terminal_write, terminal_read, terminal_close):
            self.add_function(_refusing(tool), takes_ctx=False)

    async def aclose(self) -> None:
        """Close every terminal and the kept Python interpreter (the conversation ends)."""
        terminals, self._terminals = self._terminals, {}
        for group in terminals.values():
            await group.aclose()
        if self._python is not None:
            await self._python.aclose()


class _Refused(HoloDeckError):
    pass


def _refusing(function: Callable[..., Any]) -> Callable[..., Awaitable[str]]:
    """`function` with a refusal or failure (`HoloDeckError`) returned as its result: the
    model reads what went wrong and can try something else."""

    async def call(*args: Any, **kwargs: Any) -> str:
        try:
            result = function(*args, **kwargs)
            if isinstance(result, Awaitable):
                result = await result
            return str(result)
        except HoloDeckError as error:
            return f"error: {error}"

    call.__name__ = function.__name__
    call.__doc__ = function.__doc__
    call.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
    call.__annotations__ = dict(getattr(function, "__annotations__", {}))
    return call


def workspace_toolset(
    spec: AgentSpec, hosting: Hosting, session_id: str | None, given: Path | None
) -> WorkspaceToolset:
    """The acting tools of one conversation of the agent at `spec`."""
    assert spec.workspace is not None
    folder = workspace_folder(spec, hosting, session_id, given)
    # on a server the agent's folder (its .env, its definition) is not the model's to read
    hidden = [spec.root] if hosting.workspaces is not None or given is not None else []
    outbound = hosting.for_agent(spec).outbound
    return WorkspaceToolset(
        spec.workspace, folder, base=spec.root, hidden=hidden, outbound=outbound
    )
