"""How to start or reach a server: the command, arguments and environment of a stdio
server, or the URL and headers of an HTTP one, from its `type: mcp` tool."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from holodeck.config.child_env import child_environment
from holodeck.net import OutboundPolicy
from holodeck.spec.models.tools import McpTool
from holodeck.tools.errors import ToolLoadError

FILESYSTEM_PACKAGE = "@modelcontextprotocol/server-filesystem"


@dataclass(frozen=True)
class _Launch:
    transport: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    outbound: OutboundPolicy | None = None  # None: the operator's `url`, reached as written

    def describe(self) -> str:
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])
        return self.url


def _launch(
    tool: McpTool,
    root: Path,
    env: Mapping[str, str],
    source: Path | None,
    outbound: OutboundPolicy | None = None,
) -> _Launch:
    def refuse(message: str) -> ToolLoadError:
        return ToolLoadError(f"MCP server `{tool.name}`: {message}", source)

    transport = tool.effective_transport
    if tool.url is not None:
        if tool.config:
            raise refuse(
                "`config` is understood for stdio servers only; pass settings "
                "to an HTTP server in its `url` or `headers`"
            )
        headers = {k: v.get_secret_value() for k, v in tool.headers.items()}
        unexpanded = [f"header `{k}`" for k, v in headers.items() if "${" in v]
        if "${" in tool.url:
            unexpanded.insert(0, f"`url` {tool.url}")
        if unexpanded:  # loaded without expanding variables (--no-env)
            raise refuse(f"{', '.join(unexpanded)} still hold(s) an unexpanded ${{VAR}}; set it")
        return _Launch(transport, url=tool.url, headers=headers, outbound=outbound)
    if tool.server is not None:
        command, args = "npx", ["-y", tool.server, *tool.args]
    else:
        assert tool.command is not None
        command, args = tool.command, list(tool.args)
        if "/" in command and not Path(command).is_absolute():
            command = str(root / command)
    args += _config_args(tool, root, refuse)
    # the server gets what programs need to run and its own `env:`, not the agent's secrets
    child = child_environment(env, tool.env)
    return _Launch(transport, command=command, args=tuple(args), env=child, cwd=root)


def _config_args(tool: McpTool, root: Path, refuse: Callable[[str], ToolLoadError]) -> list[str]:
    """`config` of the servers it is defined for: the filesystem server's
    `allowed_directories` become its arguments (relative ones from the agent's directory)."""
    if not tool.config:
        return []
    package = tool.server or next((a for a in tool.args if FILESYSTEM_PACKAGE in a), "")
    if _package_name(package) != FILESYSTEM_PACKAGE:
        raise refuse(
            f"`config` is only understood for {FILESYSTEM_PACKAGE} (allowed_directories); "
            "pass settings to other servers with `args` or `env`"
        )
    unknown = sorted(set(tool.config) - {"allowed_directories"})
    if unknown:
        raise refuse(f"unknown `config` key(s) {', '.join(unknown)}; known: allowed_directories")
    listed = tool.config.get("allowed_directories")
    dirs = [listed] if isinstance(listed, str) else listed
    if not isinstance(dirs, list) or not dirs or not all(isinstance(d, str) and d for d in dirs):
        raise refuse("`config.allowed_directories` must be a directory or a list of them")
    resolved = [(root / Path(d).expanduser()).resolve() for d in dirs]
    for path in resolved:
        if not path.is_dir():
            raise refuse(f"allowed directory not found: {path}; create it or fix the path")
    return [str(p) for p in resolved]


def _package_name(spec: str) -> str:
    """`@scope/name@1.2` -> `@scope/name`."""
    if spec.startswith("@"):
        return "@" + spec[1:].split("@", 1)[0]
    return spec.split("@", 1)[0]
