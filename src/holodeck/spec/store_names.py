"""The message for a search tool's `database:` that names no configured store: which
config.yaml files were read, so the reader knows where the entry was looked for."""

from __future__ import annotations

from pathlib import Path

from holodeck.spec.diagnostics import did_you_mean


def unknown_store(
    name: str,
    known: list[str],
    read: tuple[Path, ...],
    looked_up: tuple[Path, ...],
    refused: frozenset[str] = frozenset(),
) -> tuple[str, str]:
    """(message, hint) for `database: <name>` with no such entry under `vectorstores:`.

    `read` are the config files that exist, `looked_up` every file that would have been
    read; the project's file (beside agent.yaml) is the last one looked up. `refused`
    names entries that exist but were left out for their own errors."""
    if name in refused:
        where = " or ".join(str(path) for path in read) or "config.yaml"
        return (
            f"the vectorstore `{name}` in {where} could not be used",
            f"fix the error reported at `vectorstores.{name}`",
        )
    if read:
        where = " or ".join(str(path) for path in read)
        message = f"no vectorstore named `{name}` under `vectorstores:` in {where}"
    elif looked_up:
        where = " or ".join(str(path) for path in looked_up)
        message = f"no vectorstore named `{name}`: no config.yaml was found (looked for {where})"
    else:
        message = f"no vectorstore named `{name}` in the settings this agent was loaded with"
    target = looked_up[-1] if looked_up else Path("config.yaml")
    hint = did_you_mean(name, known) or (
        f"define it under `vectorstores:` in {target}, e.g. "
        f"`{name}: {{provider: chromadb, connection_string: http://127.0.0.1:8000}}`"
    )
    return message, hint
