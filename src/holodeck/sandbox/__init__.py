"""The sandbox the file, shell, code and terminal tools run commands in: bubblewrap on
Linux, with the system read-only, the workspace (and `write_paths`) writable, the user's
home and the agent's folder hidden, its own /tmp, no network (with `allow_network`,
HTTP(S) only, through a proxy that applies the outbound policy), the child environment
allow-list, and limits on time, memory, processes and file size.

    sandbox = Sandbox(Path("work"), SandboxSettings())
    result = await sandbox.shell("ls -la")

Where bubblewrap is missing or cannot start, commands are refused with
`SandboxUnavailable` saying what to install; they run unsandboxed only with
`SandboxSettings(type="none")`.
"""

from holodeck.sandbox._bwrap import INSTALL_HINT, bwrap_argv, bwrap_program
from holodeck.sandbox._errors import SandboxError, SandboxUnavailable
from holodeck.sandbox._limits import SANDBOX_LIMITS, SandboxLimits
from holodeck.sandbox._output import CappedText, CommandResult
from holodeck.sandbox._sandbox import Sandbox, stop

__all__ = [
    "INSTALL_HINT",
    "SANDBOX_LIMITS",
    "CappedText",
    "CommandResult",
    "Sandbox",
    "SandboxError",
    "SandboxLimits",
    "SandboxUnavailable",
    "bwrap_argv",
    "bwrap_program",
    "stop",
]
