"""What `allow_network: true` adds to a sandboxed command: the relay started before it,
the proxy's socket bound in, and the proxy variables pointing at the relay.

The sandbox keeps its own network namespace (nothing but its own loopback): the command
reaches the world only through the relay on 127.0.0.1:RELAY_PORT, which forwards to
HoloDeck's `OutboundProxy`, which checks each destination.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from holodeck.sandbox._errors import SandboxError

RELAY_PORT = 3128  # in the sandbox's own network namespace: taken from no one
SOCKET_FOLDER = "/tmp/.holodeck-net"  # where the proxy's folder is bound in the sandbox
PROXY_URL = f"http://127.0.0.1:{RELAY_PORT}"


@cache
def _relay_source() -> str:
    return (Path(__file__).parent / "_relay.py").read_text(encoding="utf-8")


def relay_command(python: str, socket_name: str, command: Sequence[str]) -> list[str]:
    """`command` (argv) started by the relay, which then listens on 127.0.0.1:RELAY_PORT."""
    socket_path = f"{SOCKET_FOLDER}/{socket_name}"
    return [python, "-I", "-S", "-c", _relay_source(), socket_path, str(RELAY_PORT), *command]


def proxy_environment(environment: Mapping[str, str]) -> dict[str, str]:
    """`environment` with every proxy variable naming the relay: both spellings of
    HTTP(S)_PROXY, an empty NO_PROXY (nothing goes direct: nothing direct is reachable),
    and no ALL_PROXY (the proxy speaks HTTP, not SOCKS)."""
    dropped = {"ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"}
    routed = {name: value for name, value in environment.items() if name not in dropped}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        routed[name] = PROXY_URL
    routed.update(NO_PROXY="", no_proxy="")
    return routed


def _inside(path: Path, parents: Sequence[Path]) -> bool:
    return any(path == parent or parent in path.parents for parent in parents)


def relay_python(
    environment: Mapping[str, str], hidden: Sequence[Path], writable: Sequence[Path]
) -> str:
    """The path of a `python3` the sandbox can run (one in a hidden folder, such as a
    version manager's in the user's home, is empty there); `SandboxError` when none is."""
    for folder in environment.get("PATH", os.defpath).split(os.pathsep):
        candidate = Path(folder or ".") / "python3"
        if not candidate.is_absolute() or not os.access(candidate, os.X_OK):
            continue
        real = candidate.resolve()
        seen = [candidate, real]
        if any(_inside(p, hidden) and not _inside(p, writable) for p in seen):
            continue
        return str(candidate)
    raise SandboxError(
        "allow_network: true needs python3 in the sandbox (it relays the command's "
        "connections to HoloDeck's proxy), and none is on PATH outside the hidden folders",
        hint="install python3 for the system (`apt-get install python3`)",
    )
