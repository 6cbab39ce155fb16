"""The bubblewrap command line of one sandboxed command, and whether bubblewrap can start.

What the command sees: the system read-only (`--ro-bind / /`); its own /dev, /proc and
/tmp; the hidden paths (the user's home, the agent's folder) as empty directories, except
the workspace and `write_paths`, which are writable; no network, no other processes, no
capabilities (with `allow_network`, only the socket of HoloDeck's outbound proxy, bound
in, leads out); and the limits of `SandboxLimits`, set by `prlimit` inside the sandbox's own
user namespace, where the process count is the sandbox's alone.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from holodeck.sandbox._errors import SandboxUnavailable
from holodeck.sandbox._limits import SandboxLimits
from holodeck.sandbox._network import SOCKET_FOLDER

INSTALL_HINT = (
    "install bubblewrap (Debian and Ubuntu: `apt-get install bubblewrap`; Fedora: "
    "`dnf install bubblewrap`), or set `sandbox: {type: none}` to run commands without "
    "a sandbox on a machine you would let the model use"
)


def bwrap_program() -> str:
    """The path of `bwrap`, checked once per process to start; `SandboxUnavailable`."""
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable(
            f"the sandbox needs Linux (bubblewrap); this machine runs {sys.platform}",
            hint="run the agent on Linux, or set `sandbox: {type: none}` to run commands "
            "without a sandbox",
        )
    program = shutil.which("bwrap")
    if program is None:
        raise SandboxUnavailable("bubblewrap (`bwrap`) is not installed", hint=INSTALL_HINT)
    if shutil.which("prlimit") is None:
        raise SandboxUnavailable(
            "`prlimit` (util-linux) is not installed: the sandbox sets its limits with it",
            hint="install util-linux (`apt-get install util-linux`)",
        )
    _probe(program)
    return program


@functools.cache
def _probe(program: str) -> None:
    # Namespaces can be refused (no unprivileged user namespaces, a container's seccomp
    # profile); one tiny sandbox says so once, with bubblewrap's own reason.
    try:
        done = subprocess.run(
            [program, "--ro-bind", "/", "/", "--unshare-all", "--cap-drop", "ALL", "true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SandboxUnavailable(f"bubblewrap cannot start: {error}", hint=INSTALL_HINT) from None
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        raise SandboxUnavailable(
            f"bubblewrap cannot start a sandbox here: {reason}",
            hint="allow unprivileged user namespaces (`sysctl kernel.unprivileged_userns_clone=1`"
            ", or a container run with a seccomp profile that permits them), or run as a "
            "user that may create them",
        )


def _inside(path: Path, parents: Sequence[Path]) -> bool:
    return any(path == parent or parent in path.parents for parent in parents)


def bwrap_argv(
    program: str,
    command: Sequence[str],
    *,
    workspace: Path,
    write_paths: Sequence[Path],
    hidden: Sequence[Path],
    limits: SandboxLimits,
    proxy_folder: Path | None = None,
) -> list[str]:
    """The full command line running `command` (argv) in the sandbox, in `workspace`;
    `proxy_folder` (the outbound proxy's socket) is bound read-only at SOCKET_FOLDER."""
    writable = [workspace, *write_paths]
    argv = [program, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # a hidden folder that holds the workspace is emptied first, the workspace bound
    # again into it; one inside the workspace is emptied after the workspace is bound
    outer = [h for h in hidden if h.is_dir() and not _inside(h, writable)]
    inner = [h for h in hidden if h.is_dir() and _inside(h, writable)]
    for path in outer:
        argv += ["--tmpfs", str(path)]
    argv += ["--tmpfs", "/tmp"]
    for path in writable:
        argv += ["--bind", str(path), str(path)]
    for path in inner:
        argv += ["--tmpfs", str(path)]
    if proxy_folder is not None:
        argv += ["--ro-bind", str(proxy_folder), SOCKET_FOLDER]
    argv += [
        "--chdir",
        str(workspace),
        # network (even with allow_network: the proxy's socket is the way out), processes,
        # IPC, host name, users (where allowed)
        "--unshare-all",
        "--cap-drop",
        "ALL",  # when HoloDeck runs as root, bubblewrap would otherwise keep them
        "--die-with-parent",
        "--new-session",  # no TIOCSTI into a terminal outside
        "--",
        "prlimit",
        *limits.prlimit_args(),
        "--",
        *command,
    ]
    return argv
