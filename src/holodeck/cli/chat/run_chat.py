"""`holodeck chat`'s session: the agent loaded, then an interactive chat or one piped
question. Imported by the command (`command.py`) once its options are read, so that
`holodeck chat --help` loads no model SDK."""

from __future__ import annotations

import asyncio
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import click

from holodeck.cli.chat.commands import banner_rows
from holodeck.cli.chat.conversation import Conversation, approve_unasked, deny_unasked
from holodeck.cli.chat.loop import KEYS_HINT, asking_approval, interactive
from holodeck.cli.chat.view import ChatView
from holodeck.cli.ingest_progress import IngestBar, has_search_tools
from holodeck.config.loader import load_agent
from holodeck.errors import EXIT_EXECUTION, EXIT_INTERRUPTED, EXIT_OK, ConfigurationError
from holodeck.observability import traced_in_terminal, tree_printer
from holodeck.runtime import Agent, Cassette, Hosting, Run, RunOptions

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from holodeck.cli.chat.conversation import Conversation


def run(
    ctx: click.Context,
    path: Path,
    model: str | None,
    harness: Literal["none"] | None,
    max_messages: int | None,
    session: Path | None,
    adopt_session: bool,
    record: Path | None,
    replay: Path | None,
    verbose: bool,
    trace: bool,
    allow_loopback: bool,
    approve_all: bool,
) -> None:
    """`holodeck chat` with its options read; leaves with the exit code."""

    debug = bool(ctx.obj and ctx.obj.get("debug"))
    conversation = _conversation(
        path,
        model,
        harness,
        max_messages,
        session,
        record,
        replay,
        debug,
        trace=trace,
        adopt_session=adopt_session,
        allow_loopback=allow_loopback,
    )
    asking = sys.stdin.isatty()
    markdown = sys.stdout.isatty()
    view = ChatView(
        sys.stdout, sys.stdout if markdown else sys.stderr, markdown=markdown, verbose=verbose
    )
    resumed = conversation.resume()
    rows = banner_rows(conversation, resumed)
    if asking:
        view.banner(conversation.spec.name, rows, KEYS_HINT)
        output = None
        if not markdown and sys.stderr.isatty():  # the prompt goes where the user looks
            from prompt_toolkit.output import create_output

            output = create_output(stdout=sys.stderr)
        conversation.approver = approve_unasked if approve_all else asking_approval(output)
        _leave(_run(conversation, interactive(conversation, view, output)))
    question = sys.stdin.read()
    if not question.strip():
        raise ConfigurationError(
            "nothing to ask: stdin was empty",
            hint="run it in a terminal to chat, or pipe a question in",
        )
    view.banner(conversation.spec.name, rows, None)
    conversation.approver = approve_unasked if approve_all else deny_unasked
    outcome = _run(conversation, conversation.ask(question, view))
    codes = {"answered": EXIT_OK, "cancelled": EXIT_INTERRUPTED, "failed": EXIT_EXECUTION}
    _leave(codes[outcome])


def _conversation(
    path: Path,
    model: str | None,
    harness: Literal["none"] | None,
    max_messages: int | None,
    session: Path | None,
    record: Path | None,
    replay: Path | None,
    debug: bool,
    *,
    trace: bool = False,
    adopt_session: bool = False,
    allow_loopback: bool = False,
) -> Conversation:
    """The agent at `path`, ready to talk (a problem is a HoloDeckError, said by `main`)."""

    spec = load_agent(path)
    options = RunOptions(model=model, harness=harness).for_agent(spec)
    hosting = Hosting(progress=IngestBar(), allow_loopback=allow_loopback)
    cassette = Cassette.from_settings(
        spec.execution, spec.root, options.env, record_path=record, replay_path=replay
    )
    telemetry = None
    if trace:
        telemetry = traced_in_terminal(spec, options.env)
        telemetry.watch_traces(tree_printer(lambda text: print(text, file=sys.stderr)))
    agent = Agent(spec, replace(options, cassette=cassette), telemetry=telemetry, hosting=hosting)
    compaction = spec.memory.compaction
    if max_messages is not None and compaction is not None and compaction.enabled:
        raise ConfigurationError(
            f"--max-messages drops old messages, and {spec.name} summarises them instead "
            "(memory.compaction)",
            hint="leave out --max-messages, or set `memory.compaction: {enabled: false}`",
        )
    limit = max_messages or spec.memory.max_messages
    return Conversation(
        agent,
        max_messages=limit,
        session_file=session,
        adopt_session=adopt_session,
        debug=debug,
    )


def _run(conversation: Conversation, main: Coroutine[Any, Any, Any]) -> Any:
    """Run `main` in a `Run` of the agent: on the way out it stops the conversation's and
    the agent's servers (MCP), telemetry, and saves the cassette. SIGTERM or SIGHUP (the
    terminal closed) stop it the same way; the command then exits 128 + the signal's
    number."""

    async def runner() -> Any:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        stopped: list[int] = []

        def stop(signum: int) -> None:
            stopped.append(signum)
            task.cancel()

        for signum in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(signum, stop, signum)
        try:
            async with Run(conversation.agent) as run:
                run.on_close(lambda: conversation.session.aclose())  # the session resumed
                try:
                    await _ingest(conversation)
                    result = await main
                except asyncio.CancelledError:
                    if not stopped:
                        raise
                    task.uncancel()  # the stop is handled: closing must not be cancelled
                    result = None
        finally:
            for signum in (signal.SIGTERM, signal.SIGHUP):
                loop.remove_signal_handler(signum)
        if stopped:  # even when the turn took the cancellation as its own end
            raise _Stopped(128 + stopped[0])
        return result

    try:
        return asyncio.run(runner())
    except _Stopped as stopped:
        _leave(stopped.code)


async def _ingest(conversation: Conversation) -> None:
    """Search tools read and embed their sources before the first question, under a bar."""

    bar = conversation.agent.hosting.progress
    if isinstance(bar, IngestBar) and has_search_tools(conversation.agent.spec):
        with bar.shown():
            await conversation.agent.start()


class _Stopped(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


def _leave(code: int | None) -> NoReturn:
    raise SystemExit(code or EXIT_OK)
