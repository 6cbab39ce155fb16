"""`holodeck chat`: the command and its options; the session is `run_chat.py`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from holodeck.cli.run_options import run_options


@click.command()
@click.argument("path", type=click.Path(path_type=Path), default=Path())
@run_options
@click.option(
    "--max-messages",
    type=click.IntRange(min=1),
    help="Messages of the conversation kept [default: the agent's memory.max_messages, 20].",
)
@click.option(
    "--session",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Keep the conversation in this JSON file: resumed if it exists, saved after each "
    "turn. Chats sharing a file take turns.",
)
@click.option(
    "--adopt-session",
    is_flag=True,
    help="Resume the --session file even if another agent saved it.",
)
@click.option("-v", "--verbose", is_flag=True, help="Show tool arguments and results in full.")
@click.option(
    "--trace",
    is_flag=True,
    help="Print each turn's span tree on stderr (traced in memory without a collector).",
)
@click.option(
    "--allow-loopback",
    is_flag=True,
    help="Let web_fetch and what the model steers reach this machine (127.0.0.1, ::1, "
    "localhost), for agents under development; other private addresses stay refused.",
)
@click.option(
    "--approve-all",
    is_flag=True,
    help="Allow every tool call that needs approval without asking. Without it a terminal "
    "asks y/N for each; piped chat (stdin not a terminal) denies them.",
)
@click.pass_context
def chat(ctx: click.Context, /, **options: Any) -> None:
    """Chat with an agent: an agent.yaml, an image directory or an image .tar.gz.

    Answers stream as they are written, with each tool call shown as it runs. Enter sends;
    Esc then Enter (or Alt+Enter) adds a line. Ctrl+C cancels an answer; `exit`, `quit` or
    Ctrl+D leaves. /help lists the commands (/tools, /usage, /reset, /save FILE).

    With stdin not a terminal, the whole of stdin is one question: the answer goes to
    stdout, everything else to stderr, and the command exits.

    A tool call that needs approval (`approval:`) is shown with its arguments and asked
    about: `Allow TOOL(args)? [y/N]`. Piped chat cannot ask: it denies the call (the model
    is told) unless --approve-all is given.

    Exits 0 when done, 2 for an invalid definition or options, 3 when the model fails.

    \b
    Examples:
      holodeck chat my-agent/agent.yaml
      holodeck chat my-image.tar.gz --model test
      holodeck chat . --session ~/.holodeck/sessions/support.json
      holodeck chat my-image --allow-loopback   # web_fetch may read http://127.0.0.1:3000
      echo "What's the weather in Oslo?" | holodeck chat examples/weather --model test
    """
    # the session's modules (the runtime, pydantic-ai, prompt_toolkit) load only now, so
    # that `holodeck chat --help` needs none of them
    from holodeck.cli.chat import run_chat

    run_chat.run(ctx, **options)
