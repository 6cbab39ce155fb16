"""`holodeck test capture`: a conversation made a test case, from a chat session file, a
served session, a saved run's case, or turns sampled from a request log; the run is
`cli/run_capture.py`."""

from __future__ import annotations

from pathlib import Path

import click

from holodeck.errors import ConfigurationError
from holodeck.testing.capture.redaction import Redaction

KEY_VARIABLE = "HOLODECK_API_KEY"
KINDS = ("email", "phone", "card", "pii")


@click.command()
@click.argument("path", type=click.Path(path_type=Path), default=Path())
@click.option(
    "--from-chat",
    "chat_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A chat session file (`holodeck chat --session FILE`).",
)
@click.option(
    "--from-session",
    "session_id",
    metavar="ID",
    help="A served session of PATH's agent, by the session_id its answers returned, read "
    "from the session store its `memory:` names.",
)
@click.option(
    "--key",
    "api_key",
    envvar=KEY_VARIABLE,
    help=f"--from-session: the API key that started the session [env: {KEY_VARIABLE}; "
    "prefer the variable: a command line is visible to other users of the machine].",
)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".holodeck") / "server",
    show_default=True,
    help="--from-session: the server's state directory (where a SQLite store without a "
    "url keeps sessions.db).",
)
@click.option(
    "--from-run",
    "run_ref",
    metavar="RUN",
    help="A saved test run (id, prefix, path, `latest` or `previous`); with --case.",
)
@click.option("--case", "case_name", metavar="NAME", help="--from-run: the case to capture.")
@click.option(
    "--from-log",
    "log",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A served agent's request log (~/.holodeck/logs/agent-<name>.log): one case per "
    "sampled turn.",
)
@click.option(
    "--sample",
    type=click.IntRange(1, 100_000),
    default=20,
    show_default=True,
    help="--from-log: how many turns to sample.",
)
@click.option(
    "--since",
    metavar="DATE",
    help="--from-log: only turns logged since DATE (2026-12-01, 2026-12-01T09:30, or 7d, "
    "12h, 30m ago).",
)
@click.option("--seed", type=int, help="--from-log: the sample's seed (the same turns each time).")
@click.option("--name", help="The case's name (with --from-log, the prefix of each).")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Add the case(s) to this cases file (.yaml keeps its comments and layout, .json, "
    ".jsonl), or to an agent.yaml's test_cases; default: print them.",
)
@click.option(
    "--redact",
    "kinds",
    multiple=True,
    type=click.Choice(KINDS),
    help="Replace this personal data in the case (repeatable): email, phone, card, or "
    "pii for all three.",
)
@click.option(
    "--redact-pattern",
    "patterns",
    multiple=True,
    metavar="REGEX",
    help="Replace what this regular expression matches (repeatable).",
)
def capture(
    path: Path,
    chat_file: Path | None,
    session_id: str | None,
    api_key: str | None,
    state_dir: Path,
    run_ref: str | None,
    case_name: str | None,
    log: Path | None,
    sample: int,
    since: str | None,
    seed: int | None,
    name: str | None,
    output: Path | None,
    kinds: tuple[str, ...],
    patterns: tuple[str, ...],
) -> None:
    """Make a test case of a conversation: the user's turns, the tools the agent called
    (as `expected_tools`, with their arguments where the values were literal) and its
    answers (as `ground_truth`).

    Give one source: --from-chat FILE, --from-session ID (PATH's served session, with
    the key that started it), --from-run RUN --case NAME, or --from-log LOG (--sample
    N turns, --since DATE, --seed S). The case is printed as YAML, or added to -o FILE.

    Exit codes: 0 captured, 2 no such conversation, a session of another key, or a file
    that cannot be read or written.

    \b
    Examples:
      holodeck test capture --from-chat chat.json --name refund-flow -o cases.yaml
      HOLODECK_API_KEY=... holodeck test capture agent.yaml --from-session 3f2a... -o agent.yaml
      holodeck test capture --from-run latest --case where-is-my-order --redact pii
      holodeck test capture --from-log ~/.holodeck/logs/agent-desk.log --sample 50 \\
          --since 7d --seed 1 -o tests/sampled.yaml
    """
    from holodeck.cli import run_capture

    given = [
        flag
        for flag, value in (
            ("--from-chat", chat_file),
            ("--from-session", session_id),
            ("--from-run", run_ref),
            ("--from-log", log),
        )
        if value is not None
    ]
    if len(given) != 1:
        raise ConfigurationError(
            "give one conversation to capture" + (f", not {' and '.join(given)}" if given else ""),
            hint="--from-chat FILE, --from-session ID, --from-run RUN --case NAME, or "
            "--from-log LOG",
        )
    request = run_capture.CaptureRequest(
        path=path,
        chat_file=chat_file,
        session_id=session_id,
        run_ref=run_ref,
        case_name=case_name,
        log=log,
        sample=sample,
        since=since,
        seed=seed,
        name=name,
        output=output,
        redaction=Redaction.of(kinds, patterns),
        api_key=api_key,
        state_dir=state_dir,
    )
    raise SystemExit(run_capture.run(request))
