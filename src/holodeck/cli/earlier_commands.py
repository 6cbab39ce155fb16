"""Commands of the shipped HoloDeck, and what to run here instead.

Without this, `holodeck serve` is "no such command" and `holodeck deploy build` reads
`build` as the path of an agent ("no such file or directory")."""

from __future__ import annotations

import os.path  # not pathlib: this module loads with every command, `--version` too

_NOT_YET = "is not available in this HoloDeck yet"

# top-level commands: name -> what to do here
COMMANDS: dict[str, str] = {
    "serve": "`holodeck serve` is `holodeck deploy` here; it serves agents over HTTP: "
    "`holodeck deploy agent.yaml --port 8000` (see `holodeck deploy --help`)",
    "config": f"`holodeck config` {_NOT_YET}: edit ~/.holodeck/config.yaml (or config.yaml "
    "beside agent.yaml) by hand; `holodeck validate` checks it",
    "mcp": "`holodeck mcp` has one subcommand here: `holodeck mcp serve PATH...` serves "
    "agents as MCP tools over stdio (see `holodeck mcp serve --help`; `holodeck deploy` "
    "serves them at /mcp too). The shipped HoloDeck's `mcp search`, `add`, `list` and "
    "`remove` are not here: add an MCP server to agent.yaml by hand as a tool "
    "`{type: mcp, name: ..., command: ..., args: [...]}`",
    "workflow": f"`holodeck workflow` {_NOT_YET}: an agent can call others as "
    "`{type: agent, path: other/agent.yaml}` tools",
    "worker": f"`holodeck worker` {_NOT_YET}: `holodeck deploy --workers N` runs several "
    "server processes",
}

# subcommands: (command, word) -> what to do here
SUBCOMMANDS: dict[tuple[str, str], str] = {
    ("deploy", "build"): "`holodeck deploy build` is `holodeck deploy --build` here: "
    "`holodeck deploy agent.yaml --build --tag NAME:TAG` builds the agent's container "
    "image (podman, buildah or docker); add `--push REGISTRY` to push it",
    ("deploy", "run"): "`holodeck deploy run` started a built container; here "
    "`holodeck deploy agent.yaml` serves the agent directly",
    ("deploy", "push"): "`holodeck deploy push` is `holodeck deploy --build --push REGISTRY` "
    "here: `holodeck deploy agent.yaml --build --push ghcr.io/org` builds the agent's "
    "image and pushes it, with the container tool's own login (`podman login REGISTRY`)",
    ("deploy", "status"): f"`holodeck deploy status` {_NOT_YET}: a served agent answers "
    "GET /health and GET /ready",
    ("deploy", "destroy"): f"`holodeck deploy destroy` {_NOT_YET}: stop the `holodeck "
    "deploy` process (Ctrl+C or SIGTERM)",
}


def instead(args: list[str]) -> str | None:
    """What to run here for an earlier command line, or None when `args` is not one.

    A word that is also an existing path (an agent directory named `build`) is a path."""
    if not args:
        return None
    if args[0] in COMMANDS:
        return COMMANDS[args[0]]
    words = [a for a in args[1:] if not a.startswith("-")]
    if words:
        found = SUBCOMMANDS.get((args[0], words[0]))
        if found is not None and not os.path.exists(words[0]):  # noqa: PTH110 (see the import)
            return found
    return None
