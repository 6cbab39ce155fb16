"""Tools that act in a workspace: files (read by line range, write, edit by one exact
replacement, list, glob, grep), a shell command, a Python snippet (in a fresh interpreter,
or in one kept per session: `PythonSession`) and named terminals.

File tools run in HoloDeck's process with every path resolved inside the workspace
(absolute paths, `..` and symlinks leading out are refused); shell, code and terminals run
in the sandbox (`holodeck.sandbox`). Refusals and failures raise `WorkspaceError` with one
line the model can act on.

    files = WorkspaceFiles(Path("work"))
    commands = CommandTools(Sandbox(Path("work")))
"""

from holodeck.tools.workspace._commands import CommandTools
from holodeck.tools.workspace._errors import WorkspaceError
from holodeck.tools.workspace._files import MAX_CHARS, MAX_MATCHES, WorkspaceFiles
from holodeck.tools.workspace._paths import resolve
from holodeck.tools.workspace._python_session import PythonSession
from holodeck.tools.workspace._terminals import MAX_TERMINALS, Terminals

__all__ = [
    "MAX_CHARS",
    "MAX_MATCHES",
    "MAX_TERMINALS",
    "CommandTools",
    "PythonSession",
    "Terminals",
    "WorkspaceError",
    "WorkspaceFiles",
    "resolve",
]
