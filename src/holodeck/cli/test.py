"""`holodeck test`: run an agent's test cases, check tool use, score answers, report."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from holodeck.cli.main import (
    EXIT_CONFIG,
    EXIT_EXECUTION,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TEST_FAILED,
)
from holodeck.cli.run_options import run_options

if TYPE_CHECKING:
    from rich.console import Console

    from holodeck.testing.results import TestRun

RUNS_DIR = Path(".holodeck") / "runs"


@click.command()
@click.argument("path", type=click.Path(path_type=Path), default=Path())
@click.option("--case", "names", multiple=True, help="Run only this case (repeatable).")
@click.option("-k", "keyword", help="Run only cases whose name or input contains this text.")
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=None,
    help="Cases run at once.  [default: 8]",
)
@click.option(
    "--rate-limit",
    type=click.IntRange(1, 100_000),
    metavar="N",
    help="At most N model requests per minute across the run (judges included).",
)
@click.option(
    "--repeat",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="Run each case N times; report pass rate and flag flaky cases.",
)
@run_options
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write a report: .json, .md, .xml / .junit.xml (JUnit) or .html.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "markdown", "junit", "html"]),
    help="Report format when the extension does not say.",
)
@click.option(
    "--compare",
    nargs=2,
    metavar="RUN_A RUN_B",
    help="Compare two saved runs (ids, `latest`, `previous`, or paths) and exit.",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="Show conversations, full tool results and judge prompts."
)
@click.option("--strict", is_flag=True, help="Treat keys beyond spec_version 1 as errors.")
def test(
    path: Path,
    names: tuple[str, ...],
    keyword: str | None,
    concurrency: int | None,
    rate_limit: int | None,
    repeat: int,
    model: str | None,
    record: Path | None,
    replay: Path | None,
    output: Path | None,
    fmt: str | None,
    compare: tuple[str, str] | None,
    verbose: bool,
    strict: bool,
) -> None:
    """Run the test cases of an agent (agent.yaml, image directory or .tar.gz).

    Each case runs in its own conversation; its tool calls are checked against
    `expected_tools` and its answer is scored by the configured metrics. Every run
    is saved under .holodeck/runs/ for `--compare`.

    Exit codes: 0 all passed, 1 a test failed (or `--compare` found a regression),
    2 invalid definition or options, 3 execution error (e.g. the model could not be
    reached), 130 interrupted (a partial report is still written).

    \b
    Examples:
      holodeck test agent.yaml
      holodeck test examples/weather --model test -o report.html
      holodeck test my-image --case refund-policy --repeat 5
      holodeck test . --record cassettes/ci.yaml      # then, in CI:
      holodeck test . --replay cassettes/ci.yaml -o junit.xml
      holodeck test --compare previous latest
    """
    from rich.console import Console

    console = Console(stderr=False, highlight=False)
    if compare is not None:
        raise SystemExit(_compare(compare, console))
    if record is not None and replay is not None:
        raise click.UsageError("give --record or --replay, not both")
    from holodeck.llm.cassette import Cassette, CassetteError
    from holodeck.llm.errors import ProviderError
    from holodeck.llm.rate_limit import RateLimiter
    from holodeck.runtime.agent import TurnError
    from holodeck.runtime.options import RunOptions
    from holodeck.spec import SpecError, load_agent
    from holodeck.testing.runner import DEFAULT_CONCURRENCY, TestOptions, run_tests
    from holodeck.tools.errors import ToolLoadError

    try:
        spec = load_agent(path, strict=strict)
    except SpecError as exc:
        click.echo(exc.render(), err=True)
        raise SystemExit(EXIT_CONFIG) from None
    for warning in spec.warnings:
        click.echo(warning.render(), err=True)
    if not spec.test_cases:
        click.echo(
            f"{path}: no test cases (add `test_cases:` to agent.yaml, or tests/*.yaml to an image)",
            err=True,
        )
        raise SystemExit(EXIT_CONFIG)
    try:
        cassette = Cassette.from_settings(
            spec.execution, spec.root, None, record_path=record, replay_path=replay
        )
    except CassetteError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(EXIT_CONFIG) from None
    options = TestOptions(
        run=RunOptions(
            model=model,
            cassette=cassette,
            rate_limit=RateLimiter(rate_limit) if rate_limit else None,
        ),
        names=names,
        keyword=keyword,
        concurrency=concurrency or DEFAULT_CONCURRENCY,
        repeat=repeat,
    )
    from holodeck.testing.progress import live_progress
    from holodeck.testing.reports import render_console, write_report
    from holodeck.testing.run_store import save_run
    from holodeck.testing.runner import select_cases

    selected = select_cases(spec, options)
    if not selected:
        click.echo("no test case matches --case/-k", err=True)
        raise SystemExit(EXIT_CONFIG)
    try:
        with live_progress(console, len(selected)) as on_case:
            options.on_case = on_case
            run = _run(run_tests(spec, options))
    except (ProviderError, ToolLoadError, TurnError, CassetteError) as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(
            EXIT_EXECUTION if isinstance(exc, ProviderError) else EXIT_CONFIG
        ) from None
    if cassette is not None:
        cassette.save()
    render_console(run, console, verbose=verbose)
    saved = save_run(run, RUNS_DIR)
    console.print(f"[dim]saved {saved}[/dim]")
    if output is not None:
        try:
            written = write_report(run, output, fmt)
        except ValueError as exc:
            click.echo(f"error: {exc}", err=True)
            raise SystemExit(EXIT_CONFIG) from None
        except OSError as exc:  # the run itself is saved above; only the report is missing
            click.echo(f"error: cannot write the report {output}: {exc.strerror or exc}", err=True)
            raise SystemExit(EXIT_CONFIG) from None
        console.print(f"report: {written}")
    if run.interrupted:
        # a tool still running in a thread would keep the process alive: leave now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)
    if run.summary.errors:
        raise SystemExit(EXIT_EXECUTION)
    raise SystemExit(EXIT_TEST_FAILED if run.summary.failed else EXIT_OK)


def _run(coroutine: Coroutine[Any, Any, TestRun]) -> TestRun:
    """Run the tests. Ctrl+C cancels them and still returns the partial run; a second
    Ctrl+C leaves at once."""
    import signal

    loop = asyncio.new_event_loop()
    task = loop.create_task(coroutine)
    # cancel cleanly rather than raise KeyboardInterrupt wherever the signal lands
    loop.add_signal_handler(signal.SIGINT, task.cancel)
    try:
        return loop.run_until_complete(task)
    except asyncio.CancelledError:
        click.echo("Interrupted.", err=True)
        os._exit(EXIT_INTERRUPTED)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        loop.close()


def _compare(refs: tuple[str, str], console: Console) -> int:
    from holodeck.testing.comparison import compare_runs
    from holodeck.testing.reports.comparison import render_comparison
    from holodeck.testing.run_store import load_run

    try:
        first, second = (load_run(ref, RUNS_DIR) for ref in refs)
    except (FileNotFoundError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_CONFIG
    comparison = compare_runs(first, second)
    render_comparison(comparison, console)
    return EXIT_TEST_FAILED if comparison.regressions else EXIT_OK
