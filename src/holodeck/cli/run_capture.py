"""`holodeck test capture`'s work: read the conversation it was pointed at, make the
case(s), and print them or add them to a cases file."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import click

from holodeck.cli.run_report import RUNS_DIR
from holodeck.config.loader import load_agent
from holodeck.errors import InputError
from holodeck.runtime import SessionError, read_saved_session
from holodeck.server.served_sessions import read_served_session
from holodeck.testing.capture.case import case_from, default_name
from holodeck.testing.capture.case_writer import append_cases, cases_yaml
from holodeck.testing.capture.conversation import Captured, from_case_result, from_entries
from holodeck.testing.capture.redaction import Redaction
from holodeck.testing.capture.request_log import parse_since, sample_log
from holodeck.testing.run_store import load_run


@dataclass(frozen=True)
class CaptureRequest:
    """What the command line asked for: one source, and what to do with the cases."""

    path: Path  # the agent (for a served session)
    chat_file: Path | None = None
    session_id: str | None = None
    run_ref: str | None = None
    case_name: str | None = None
    log: Path | None = None
    sample: int = 20
    since: str | None = None
    seed: int | None = None
    name: str | None = None
    output: Path | None = None
    redaction: Redaction = field(default_factory=Redaction)
    api_key: str | None = None
    state_dir: Path = Path(".holodeck") / "server"


def run(request: CaptureRequest) -> int:
    """Capture, then print the cases or add them to `request.output`; the exit code."""
    conversations = _conversations(request)
    cases = []
    taken: set[str] = set()
    for number, captured in enumerate(conversations, start=1):
        for note in captured.notes:
            click.secho(f"warning: {captured.origin}: {note}", fg="yellow", err=True)
        if request.name and request.log is None:
            name = request.name
        else:  # turns of a log: `--name` is their prefix
            base = f"{request.name}-{number}" if request.name else default_name(captured)
            name = _unique(base, taken)
        taken.add(name)
        cases.append(case_from(captured, name, request.redaction))
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    origin = conversations[0].origin if len(conversations) == 1 else f"{request.log}"
    comment = f"captured from {origin} on {when}"
    if request.redaction:
        comment += " (redacted)"
    if request.output is None:
        click.echo(cases_yaml(cases, comment), nl=False)
        return 0
    written = append_cases(request.output, cases, comment)
    names = ", ".join(case["name"] for case in cases)
    click.echo(f"Added {len(cases)} case{'s' if len(cases) != 1 else ''} to {written}: {names}")
    return 0


def _conversations(request: CaptureRequest) -> list[Captured]:
    if request.chat_file is not None:
        return [_chat_file(request.chat_file)]
    if request.session_id is not None:
        spec = load_agent(request.path)
        data = asyncio.run(
            read_served_session(spec, request.session_id, request.api_key, request.state_dir)
        )
        origin = f"session {request.session_id} of {spec.name}"
        return [_saved(data, origin, "the session store holds a damaged session")]
    if request.run_ref is not None:
        return [_run_case(request.run_ref, request.case_name)]
    assert request.log is not None
    since = parse_since(request.since) if request.since else None
    turns = sample_log(request.log, request.sample, since=since, seed=request.seed)
    return [turn.captured for turn in turns]


def _chat_file(path: Path) -> Captured:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(
            f"no chat session file at {path}",
            hint="give the file `holodeck chat --session FILE` saved the conversation to",
        ) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    return _saved(data, str(path), f"{path} is not a chat session file")


def _saved(data: bytes, origin: str, problem: str) -> Captured:
    try:
        saved = read_saved_session(data)
    except SessionError as exc:
        raise InputError(
            f"{problem}: {exc.message}",
            hint="a session is the JSON `holodeck chat --session FILE` or a served agent's "
            "session store keeps",
        ) from None
    return from_entries(saved.entries, origin)


def _run_case(ref: str, case_name: str | None) -> Captured:
    run = load_run(ref, RUNS_DIR)
    names = [case.name for case in run.cases]
    if case_name is None and len(run.cases) == 1:
        case_name = names[0]
    if case_name is None or case_name not in names:
        listed = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
        said = (
            f"run {run.run_id} has no case {case_name!r}"
            if case_name
            else (f"run {run.run_id} has {len(names)} cases: say which with --case")
        )
        raise InputError(said, hint=f"its cases: {listed}")
    case = run.cases[names.index(case_name)]
    return from_case_result(case, f"run {run.run_id}, case {case_name}")


def _unique(base: str, taken: set[str]) -> str:
    name, number = base, 2
    while name in taken:
        name, number = f"{base}-{number}", number + 1
    return name
