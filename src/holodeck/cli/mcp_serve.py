"""`holodeck mcp serve`: agents as the tools of an MCP server over stdio."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

import holodeck.server as server  # loads its names on use: `mcp serve --help` stays light
from holodeck.cli.run_options import model_option
from holodeck.config.loader import load_agent
from holodeck.config.own_process import quiet_program


@click.command("serve")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@model_option
def serve(paths: tuple[Path, ...], model: str | None) -> None:
    """Serve agents as an MCP server over stdio, for desktop assistants.

    Each agent (agent.yaml, image directory or .tar.gz) is one tool, named as the
    agent: `question` in, the answer out, with a `session_id` to pass back to continue
    the conversation. Conversations last while the process runs; an agent's files,
    shell and terminal tools act in its own workspace, as in `holodeck chat`, for
    every conversation. stdout carries only
    the protocol; messages go to stderr. Over HTTP, `holodeck deploy` serves the same
    tools at /mcp.

    \b
    Examples:
      holodeck mcp serve examples/weather --model test
      # a desktop assistant's MCP settings:
      {"command": "holodeck", "args": ["mcp", "serve", "/path/to/agent"]}
    """
    quiet_program()
    specs = [load_agent(path) for path in paths or (Path(),)]
    asyncio.run(server.serve_mcp_stdio(specs, model))
