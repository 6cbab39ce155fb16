"""Entry point: a click group whose commands are imported only when run.

`holodeck --version` and `holodeck --help` import neither pydantic nor any
provider SDK; each command's module is imported when that command runs.

Errors are printed here, once: a `HoloDeckError` raised by any command becomes
`error: <message>` and `hint: <how to fix>` on stderr and ends the process with its
exit code (0 success, 1 a test failed, 2 invalid definition or usage, 3 execution
error, 130 interrupted). Tracebacks only with `--debug`, which is the group's option but
is read anywhere on the line (`holodeck --debug chat .` and `holodeck chat . --debug`).
"""

from __future__ import annotations

import importlib
import os.path  # not pathlib: loaded with every command, `--version` too
import sys
import traceback
from typing import Any, NoReturn

import click

from holodeck._version import __version__
from holodeck.cli.earlier_commands import instead
from holodeck.config.own_process import leave_quickly, quiet_program
from holodeck.errors import EXIT_EXECUTION, EXIT_INTERRUPTED, HoloDeckError

# name -> (module, attribute, one-line help shown by `holodeck --help`). A two-word name
# (`test view`) is a subcommand of the first word's command, which otherwise reads the
# second word as a path: the subcommand wins unless a file or directory has that name.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("holodeck.cli.init", "init", "Create a new agent project or agent image."),
    "validate": ("holodeck.cli.validate", "validate", "Check agent definitions for errors."),
    "schema": ("holodeck.cli.schema", "schema", "Write the JSON Schema of agent.yaml."),
    "test": ("holodeck.cli.test", "test", "Run an agent's test cases and metrics."),
    "test merge": ("holodeck.cli.test_merge", "merge", "Combine shard runs into one run."),
    "test view": ("holodeck.cli.test_view", "view", "Browse saved test runs in a local page."),
    "test capture": (
        "holodeck.cli.test_capture",
        "capture",
        "Make a test case of a chat, a served session, a run's case or logged turns.",
    ),
    "test optimize": (
        "holodeck.cli.test_optimize",
        "optimize",
        "Improve an agent's settings and instructions against its test cases.",
    ),
    "redteam": ("holodeck.cli.redteam", "redteam", "Attack an agent and report what got through."),
    "chat": ("holodeck.cli.chat.command", "chat", "Chat with an agent in the terminal."),
    "deploy": ("holodeck.cli.deploy", "deploy", "Serve agents over HTTP."),
    "mcp serve": ("holodeck.cli.mcp_serve", "serve", "Serve agents as MCP tools over stdio."),
    "ingest": ("holodeck.cli.ingest", "ingest", "Read and embed search tools' sources now."),
    "memory": ("holodeck.cli.memory", "memory", "List, export or delete a user's memories."),
    "pack": ("holodeck.cli.pack", "pack", "Pack an agent image directory into a .tar.gz."),
    "push": ("holodeck.cli.push", "push", "Send an agent image to a running server."),
}


# first words of two-word commands that are not commands themselves (`holodeck mcp`)
GROUPS = {n.split()[0] for n in COMMANDS if " " in n and n.split()[0] not in COMMANDS}


def show_group(ctx: click.Context, name: str, *, asked: bool) -> NoReturn:
    """`holodeck NAME --help` (exit 0) or a bare `holodeck NAME` (exit 2): its subcommands."""
    formatter = ctx.make_formatter()
    formatter.write_usage(f"holodeck {name}", "COMMAND [ARGS]...")
    rows = [(n.split()[1], h) for n, (_, _, h) in COMMANDS.items() if n.startswith(name + " ")]
    with formatter.section("Commands"):
        formatter.write_dl(rows)
    formatter.write_paragraph()
    formatter.write_text(f"Each has its own help: `holodeck {name} {rows[0][0]} --help`.")
    click.echo(formatter.getvalue().rstrip(), err=not asked)
    ctx.exit(0 if asked else 2)


def without_debug(args: list[str]) -> tuple[list[str], bool]:
    """`args` without `--debug` (which may follow the subcommand, as error hints suggest),
    and whether it was there. Words after `--` are arguments, never options."""
    end = args.index("--") if "--" in args else len(args)
    kept = [arg for arg in args[:end] if arg != "--debug"]
    return kept + args[end:], len(kept) < end


class LazyGroup(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args, debug = without_debug(args)
        rest = super().parse_args(ctx, args)
        if debug:  # after the subcommand or before it: the same flag
            ctx.params["debug"] = True
        return rest

    def invoke(self, ctx: click.Context) -> Any:
        # Commands (and their options' callbacks) run in here: their errors are
        # reported here, so `main()` and click's test runner see the same output.
        try:
            return super().invoke(ctx)
        except HoloDeckError as exc:
            report(exc, debug=bool(ctx.params.get("debug")))

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(entry[0])
        command: click.Command = getattr(module, entry[1])
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, _, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        pair = " ".join(args[:2])
        if len(args) > 1 and pair in COMMANDS and not os.path.exists(args[1]):  # noqa: PTH110
            return pair, self.get_command(ctx, pair), args[2:]
        if name in GROUPS and (len(args) == 1 or args[1] in ctx.help_option_names):
            show_group(ctx, name, asked=len(args) > 1)
        earlier = instead(args)
        if earlier is not None:
            ctx.fail(earlier)
        if name and name not in COMMANDS and not name.startswith("-"):
            import difflib  # only for a mistyped command: not on every start

            close = difflib.get_close_matches(name, list(COMMANDS), n=1)
            hint = f" Did you mean `{close[0]}`?" if close else ""
            ctx.fail(f"No such command `{name}`.{hint} See `holodeck --help`.")
        return super().resolve_command(ctx, args)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Exit codes: 0 ok, 1 test failed, 2 invalid definition or usage, "
    "3 execution error. Docs: docs/agent-yaml.md, docs/agent-image.md",
)
@click.version_option(__version__, "-V", "--version", prog_name="holodeck")
@click.option(
    "--debug",
    is_flag=True,
    help="Show tracebacks for errors (also accepted after the command: `holodeck chat . --debug`).",
)
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """HoloDeck: define an AI agent in YAML, then test it, chat with it and serve it.

    \b
    Examples:
      holodeck init my-agent --template research
      holodeck validate my-agent/agent.yaml
      holodeck pack my-image -o my-image.tar.gz
    """
    ctx.obj = {"debug": debug}


def report(exc: HoloDeckError, *, debug: bool = False) -> NoReturn:
    """Print `exc` for a person (its traceback first with --debug), exit with its code."""
    if debug:
        click.echo("".join(traceback.format_exception(exc)).rstrip(), err=True)
    click.secho(exc.render(), fg="red", err=True)
    sys.exit(exc.exit_code)


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI; unexpected errors print one line unless --debug is given."""
    args = sys.argv[1:] if argv is None else argv
    quiet_program()
    try:
        return cli.main(args=args, prog_name="holodeck", standalone_mode=True)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except HoloDeckError as exc:  # raised outside a command; commands' are reported above
        report(exc, debug=without_debug(args)[1])
    except Exception as exc:  # last resort: a message, not a traceback
        if without_debug(args)[1]:
            raise
        click.echo(
            f"error: {type(exc).__name__}: {exc}\n(run with --debug for the traceback)",
            err=True,
        )
        sys.exit(EXIT_EXECUTION)
    finally:
        if argv is None:  # the `holodeck` program, not a caller in its own process
            leave_quickly()
