"""`holodeck init`: create a new agent project (agent.yaml) or agent image from a template."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from holodeck.errors import ExecutionError
from holodeck.scaffold import (
    DEFAULT_FORMAT,
    DEFAULT_PROVIDER,
    DEFAULT_TEMPLATE,
    FORMATS,
    PROVIDER_DEFAULTS,
    PROVIDERS,
    TEMPLATES,
    check_name,
    create_project,
)


@click.command()
@click.argument("name")
@click.option(
    "-t",
    "--template",
    type=click.Choice(TEMPLATES),
    default=DEFAULT_TEMPLATE,
    show_default=True,
    help="What the agent does: a chat agent, a research agent over documents, "
    "or a support agent with a product catalog and an order tool.",
)
@click.option(
    "-p",
    "--provider",
    type=click.Choice(PROVIDERS),
    default=DEFAULT_PROVIDER,
    show_default=True,
    help="Model provider; sets a default model you can change later.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=DEFAULT_FORMAT,
    show_default=True,
    help="agent-yaml: one agent.yaml file with instructions/, data/, tools/ and tests/. "
    "image: an agent image (config.yaml, AGENTS.md, skills/, tools/python/, tests/).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Write into an existing, non-empty directory: template files are overwritten, "
    "other files are kept.",
)
@click.option(
    "--dir",
    "parent",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(),
    help="Directory to create NAME in (created if missing).  [default: current directory]",
)
def init(name: str, template: str, provider: str, fmt: str, force: bool, parent: Path) -> None:
    """Create a new agent in the directory NAME, ready to validate, test and chat with.

    NAME is also the agent's name: letters, digits, '-' and '_', starting with a letter
    or digit. The new agent comes with sample data, a working Python tool, evaluations
    and test cases; every file has comments saying what to edit.

    \b
    Examples:
      holodeck init my-agent
      holodeck init support-bot --template customer-support --provider anthropic
      holodeck init researcher --template research --format image
      holodeck init my-agent --dir ~/agents --force
    """

    check_name(name)
    root = parent / name
    shown = name if parent == Path() else str(root)
    refreshed = root.is_dir() and any(root.iterdir())
    try:
        written = create_project(name, root, template, provider, fmt, force)
    except OSError as exc:
        raise ExecutionError(
            f"cannot create {shown}: {exc.strerror or exc}",
            hint="check that the directory is writable and the disk has room",
        ) from exc

    kind = "agent project" if fmt == "agent-yaml" else "agent image"
    settings = (
        f"template {template}, provider {provider}, model {PROVIDER_DEFAULTS[provider].model}"
    )
    if refreshed:
        click.secho(f"Rewrote the {kind} files in {shown}/ ({settings}):", fg="green")
    else:
        click.secho(f"Created {kind} {shown}/ ({settings}):", fg="green")
    for path in written:
        click.echo(f"  {path.relative_to(root).as_posix()}")
    if refreshed:
        click.echo("Files not listed above were left as they were.")
    target = shlex.quote(shown)
    steps = [
        (f"holodeck validate {target}", "check the definition"),
        (
            f"holodeck test {target} --model test",
            "offline smoke run: tools really run, answers are canned (metrics not judged)",
        ),
        (f"holodeck chat {target}", "talk to the agent"),
    ]
    width = max(len(command) for command, _ in steps)
    click.echo("\nNext steps:")
    for command, what in steps:
        click.echo(f"  {command.ljust(width)}  # {what}")
    click.echo(f"Before chatting, {PROVIDER_DEFAULTS[provider].setup}.")
