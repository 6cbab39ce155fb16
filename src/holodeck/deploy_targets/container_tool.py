"""The container tool on this machine (podman, buildah or docker) and the build and push
commands each one takes. The tool's own output goes to the terminal: a build is long and
its progress is the tool's to show."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from holodeck.errors import ConfigurationError, ExecutionError

TOOLS = ("podman", "buildah", "docker")


def find_tool() -> str:
    """The first of podman, buildah and docker that runs here (docker: with a daemon)."""
    for tool in TOOLS:
        if shutil.which(tool) is None:
            continue
        if tool == "docker" and not _docker_daemon():
            continue
        return tool
    raise ConfigurationError(
        "--build needs a container tool, and none of podman, buildah or docker (with its "
        "daemon running) is here",
        hint="install podman or buildah (apt-get install podman), or start docker; "
        "`--emit kubernetes -o DIR` writes manifests without building",
    )


def _docker_daemon() -> bool:
    done = subprocess.run(["docker", "info"], capture_output=True, check=False, timeout=30)
    return done.returncode == 0


def build_command(
    tool: str,
    context: Path,
    tag: str,
    *,
    platform: str | None = None,
    build_args: Sequence[str] = (),
) -> list[str]:
    command = [tool, "build"] if tool != "buildah" else [tool, "build", "--layers"]
    if tool in ("podman", "buildah"):
        command += ["--format", "docker"]  # keeps HEALTHCHECK, which OCI's format drops
    command += ["-t", tag]
    if platform:
        command += ["--platform", platform]
    for arg in build_args:
        command += ["--build-arg", arg]
    return [*command, str(context)]


def push_command(tool: str, tag: str) -> list[str]:
    return [tool, "push", tag]


def run_tool(command: list[str], what: str) -> None:
    """Run one of the tool's commands, its output shown; a failure is an ExecutionError."""
    try:
        done = subprocess.run(command, check=False)
    except OSError as exc:
        raise ExecutionError(f"could not run {command[0]}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise ExecutionError(
            f"{what} failed: `{' '.join(command)}` exited {done.returncode}",
            hint="its output above says why",
        )
