"""`holodeck memory list|export|delete`: a user's long-term memories (`memory.long_term`),
read from the agent's store where it runs (the embedded store on this disk, or the
PostgreSQL or Redis store its replicas share)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import click

from holodeck.cli.run_options import model_option
from holodeck.config.loader import load_agent
from holodeck.errors import ConfigurationError
from holodeck.memory import LOCAL_USER, MemoryBank, open_bank
from holodeck.runtime import RunOptions, tool_context

T = TypeVar("T")

_USER_HELP = (
    "Whose memories: `local` (chat and tests on this machine, the default), a served API "
    "key's name, or `KEY_NAME/USER_ID` for a user_id a client sent with that key."
)
path_argument = click.argument("path", type=click.Path(path_type=Path), default=Path())
user_option = click.option("--user", default=LOCAL_USER, show_default=True, help=_USER_HELP)


@click.group()
def memory() -> None:
    """List, export or delete a user's long-term memories.

    \b
    Examples:
      holodeck memory list .
      holodeck memory export . --user alice-app/u1 -o alice.json
      holodeck memory delete . --user alice-app/u1 --yes
    """


def _run(path: Path, model: str | None, work: Callable[[MemoryBank, str], Awaitable[T]]) -> T:
    spec = load_agent(path)
    bank = open_bank(spec, tool_context(spec, RunOptions(model=model).for_agent(spec)))
    if bank is None:
        raise ConfigurationError(
            f"{spec.name} keeps no long-term memories",
            hint="set `memory.long_term` in its definition (docs/memory.md)",
        )

    async def run() -> T:
        async with bank:
            return await work(bank, spec.name)

    return asyncio.run(run())


@memory.command("list")
@path_argument
@user_option
@model_option
def list_memories(path: Path, user: str, model: str | None) -> None:
    """Show a user's memories, oldest first: id, when, text."""

    async def work(bank: MemoryBank, agent: str) -> None:
        found = await bank.memories(user)
        if not found:
            click.echo(f"{agent}: no memories of {user}")
            return
        for memory in found:
            when = datetime.fromtimestamp(memory.created_at, UTC).strftime("%Y-%m-%d %H:%M")
            session = f" (session {memory.session})" if memory.session else ""
            click.echo(f"{memory.id}  {when}  {memory.text}{session}")

    _run(path, model, work)


@memory.command("export")
@path_argument
@user_option
@model_option
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here.")
def export_memories(path: Path, user: str, model: str | None, output: Path | None) -> None:
    """Write a user's memories as JSON (every field kept), to stdout or a file."""

    async def work(bank: MemoryBank, agent: str) -> str:
        found = await bank.memories(user)
        data = {"agent": agent, "user": user, "memories": [m.as_json() for m in found]}
        return json.dumps(data, indent=2, ensure_ascii=False)

    text = _run(path, model, work)
    if output is None:
        click.echo(text)
    else:
        output.write_text(text + "\n", encoding="utf-8")
        click.echo(f"wrote {output}")


@memory.command("delete")
@path_argument
@user_option
@model_option
@click.option("--id", "memory_id", help="Only this memory (its id, as `list` shows it).")
@click.option("--yes", is_flag=True, help="Do not ask first.")
def delete_memories(
    path: Path, user: str, model: str | None, memory_id: str | None, yes: bool
) -> None:
    """Delete a user's memories: all of them, or one with `--id`."""
    what = f"memory {memory_id} of {user}" if memory_id else f"every memory of {user}"
    if not yes and not click.confirm(f"Delete {what}?", default=False):
        raise click.Abort

    async def work(bank: MemoryBank, agent: str) -> int:
        if memory_id is None:
            return await bank.delete_user(user)
        return int(await bank.delete(user, memory_id))

    deleted = _run(path, model, work)
    if memory_id is not None and not deleted:
        raise ConfigurationError(
            f"{user} has no memory {memory_id!r}",
            hint=f"holodeck memory list {path} --user {user} shows the ids",
        )
    click.echo(f"deleted {deleted} {'memory' if deleted == 1 else 'memories'} of {user}")
