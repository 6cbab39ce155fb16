"""`holodeck test`'s run: load the agent, run the cases, save and report them. Imported
by the command (`cli/test.py`) once its options are read, so that `holodeck test --help`
loads none of pydantic-ai or the metrics, and `--timings` counts them as the import phase."""

from __future__ import annotations

import asyncio
import difflib
import functools
import signal
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click
from rich.console import Console

import holodeck.testing.metrics
import holodeck.testing.progress  # noqa: F401
from holodeck.cli import collector
from holodeck.cli.ingest_progress import IngestBar, has_search_tools
from holodeck.cli.run_matrix import model_runs, run_matrix
from holodeck.cli.run_report import RunReport
from holodeck.config.loader import load_agent
from holodeck.errors import EXIT_CONFIG, EXIT_INTERRUPTED, ConfigurationError
from holodeck.observability import traced_in_terminal, tree_printer
from holodeck.runtime import Cassette, Hosting, ProviderError, RateLimiter, Run, RunOptions
from holodeck.testing.metrics.judge import JudgeFactory
from holodeck.testing.offline import offline_run
from holodeck.testing.phases import Phases
from holodeck.testing.progress import live_progress
from holodeck.testing.run_details import RunDetails, describe, judged_name
from holodeck.testing.runner import (
    TestOptions,
    agent_for_tests,
    run_tests,
    select_cases,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from holodeck.runtime import Agent
    from holodeck.spec.models.agent_spec import AgentSpec
    from holodeck.spec.models.cases import TestCase
    from holodeck.testing.phases import Phases
    from holodeck.testing.runner import TestOptions
    from holodeck.testing.shards import Shard


@dataclass(frozen=True)
class TestRequest:
    """What `holodeck test` was asked: the agent at `path`, how to run its cases
    (`options`, the cassette left for the run to make from the agent's settings), the
    cassette's files, the saved run's tags, the report and what to print."""

    __test__ = False

    path: Path
    options: TestOptions
    record: Path | None = None
    replay: Path | None = None
    tags: tuple[str, ...] = ()
    output: Path | None = None
    fmt: str | None = None
    verbose: bool = False
    trace: bool = False
    strict: bool = False
    timings: bool = False
    # several `--model`s: the suite runs on each, in one run (`cli/run_matrix.py`)
    models: tuple[str, ...] = ()


def command_request(
    record: Path | None,
    replay: Path | None,
    *,
    models: tuple[str, ...],
    harness: Literal["none"] | None,
    rate_limit: int | None,
    names: tuple[str, ...],
    keyword: str | None,
    concurrency: int | None,
    repeat: int,
    shard: Shard | None,
    **given: Any,
) -> TestRequest:
    """`holodeck test`'s options as click gives them, made the run's typed request (here,
    not in the command's module: `TestOptions` and `RateLimiter` load pydantic-ai)."""
    model = models[0] if len(models) == 1 else None  # one `--model`: a run as ever
    run = RunOptions(
        model=model, harness=harness, rate_limit=RateLimiter(rate_limit) if rate_limit else None
    )
    cases = TestOptions(
        run=run,
        names=names,
        keyword=keyword,
        concurrency=concurrency,
        repeat=repeat,
        shard=shard,
    )
    matrix = tuple(dict.fromkeys(models)) if len(models) > 1 else ()
    return TestRequest(options=cases, record=record, replay=replay, models=matrix, **given)


def run(request: TestRequest, console: Console, phases: Phases) -> int:
    """`holodeck test`'s run, after the command has read its options: load, run, save,
    report; returns the exit code."""

    path, options = request.path, request.options
    with phases.phase("load"):
        spec = load_agent(path, strict=request.strict)
    for warning in spec.warnings:
        click.echo(warning.render(), err=True)
    verbose = request.verbose or bool(spec.execution.verbose)  # `execution.verbose: true` is -v
    if not spec.test_cases:
        raise ConfigurationError(
            f"{path}: no test cases",
            hint="add `test_cases:` to agent.yaml, or tests/*.yaml to an image",
        )
    _check_names(tuple(options.names), [name for name, _ in select_cases(spec, TestOptions())])
    cassette = Cassette.from_settings(
        spec.execution, spec.root, None, record_path=request.record, replay_path=request.replay
    )
    bar = IngestBar()
    options = replace(
        options, run=replace(options.run, cassette=cassette), hosting=Hosting(progress=bar)
    )
    shard = options.shard

    selected = select_cases(spec, options)
    if not selected:
        whole = select_cases(spec, replace(options, shard=None))
        if not whole:
            names_hint = ", ".join(n for n, _ in select_cases(spec, TestOptions())[:10])
            raise ConfigurationError(
                "no test case matches --case/-k", hint=f"the cases are: {names_hint}"
            )
        # more shards than cases: this one has none, and passes (the split stays whole)
        click.echo(
            f"shard {shard} has no cases: {len(whole)} case{'s' if len(whole) != 1 else ''} "
            f"are split {shard.count if shard else 1} ways",
            err=True,
        )
    report = RunReport(console, request.output, request.fmt, verbose, phases)
    models = request.models or _matrix_of(spec, options)
    if models:
        with phases.phase("load"):
            runs = model_runs(spec, options, models, request.tags)
            for each in runs:
                _check_judges(spec, each.agent, [case for _, case in selected])
        collector.settle()
        try:
            return run_matrix(spec, runs, report, len(selected))
        finally:
            if request.timings:
                click.echo(phases.line(), err=True)
    with phases.phase("load"):  # the model and tools: building the agent
        agent = agent_for_tests(spec, options, _tracing(spec, request.trace, verbose, console))
        # the commit and definition tested, read before any case runs
        details = describe(spec, agent.options, request.tags)
        _check_judges(spec, agent, [case for _, case in selected])
    # the definition, the agent and every imported module live as long as the run: kept
    # out of the collector's way, they are not scanned again and again as cases come and go
    # (bench/test_scale.py measures the run with and without the freeze)
    collector.settle()
    try:
        code = asyncio.run(_test(spec, options, agent, report, len(selected), bar, details))
    finally:
        if request.timings:
            click.echo(phases.line(), err=True)
    return code


async def _test(
    spec: AgentSpec,
    options: TestOptions,
    agent: Agent,
    report: RunReport,
    total: int,
    bar: IngestBar,
    details: RunDetails,
) -> int:
    """Run the cases, save and report what ran, then stop the agent's servers.

    Ctrl+C cancels the cases: the run so far is saved and reported at once (exit 130),
    before the servers are stopped; a second Ctrl+C stops waiting for them."""

    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    code: int | None = None
    interrupts = False
    try:
        # the run stops the agent's servers (MCP: bounded by the SDK's stdin, TERM, KILL),
        # stops telemetry and saves the cassette, after the report
        async with Run(agent):
            if has_search_tools(spec):  # ingest now, under a bar of its own, not in a case
                with bar.shown(), report.phases.phase("ingest"):
                    await agent.start()
            cases = asyncio.create_task(run_tests(spec, options, agent))

            def interrupt() -> None:
                (main if cases.done() else cases).cancel()

            loop.add_signal_handler(signal.SIGINT, interrupt)
            interrupts = True
            with live_progress(report.console, total, verbose=report.verbose) as on_case:
                options.on_case = on_case
                try:
                    with report.phases.phase("run"):
                        run = await cases  # when interrupted: the cases that finished
                except asyncio.CancelledError:
                    if main.cancelling():
                        raise
                    click.echo("Interrupted before any case ran.", err=True)
                    code = EXIT_INTERRUPTED
            if code is None:
                code = report.write(details.apply(run))
    except asyncio.CancelledError:
        if code is None:
            raise
        # a second Ctrl+C while the servers stop: what is left stops as the loop ends
    finally:
        if interrupts:
            loop.remove_signal_handler(signal.SIGINT)
    return code


def _matrix_of(spec: AgentSpec, options: TestOptions) -> tuple[str, ...]:
    """`evaluations.matrix.models`, unless one `--model` was given (it overrides them)."""
    matrix = spec.evaluations.matrix if spec.evaluations is not None else None
    if matrix is None or options.run.model is not None:
        return ()
    return tuple(matrix.models)


def _check_names(names: tuple[str, ...], cases: list[str]) -> None:
    """Refuse a `--case` that names no case: running the others would hide the typo."""
    for name in names:
        if name in cases:
            continue
        close = difflib.get_close_matches(name, cases, n=1)
        shown = ", ".join(cases[:10]) + (f" and {len(cases) - 10} more" if len(cases) > 10 else "")
        raise ConfigurationError(
            f"--case {name!r}: no test case has this name",
            hint=f"did you mean {close[0]!r}?" if close else f"the cases are: {shown}",
        )


def _check_judges(spec: AgentSpec, agent: Agent, cases: list[TestCase]) -> None:
    """A judge or simulated user whose model lacks its key (or endpoint) would turn every
    metric it judges into an ERROR that fails no case, and the run would pass: refused
    now, as the agent's own model is, before any case runs."""
    if offline_run(spec, agent.options):  # the offline model judges: no key is needed
        return
    judges = JudgeFactory(spec, spec.evaluations, agent.options)
    metrics = list(spec.evaluations.metrics) if spec.evaluations else []
    for case in cases:
        metrics += case.evaluations or []
        for turn in case.turns or []:
            metrics += turn.evaluations or []
    for metric in metrics:
        name = judged_name(metric)
        if name is not None and metric.enabled:
            _buildable(functools.partial(judges.model, metric.model), f"the judge of `{name}`")
    if any(case.simulate is not None for case in cases):
        _buildable(judges.user, "the simulated user's model")


def _buildable(build: Callable[[], object], role: str) -> None:
    try:
        build()
    except ProviderError as exc:
        if exc.exit_code != EXIT_CONFIG:  # e.g. an SDK missing: the metric says so
            return
        raise ConfigurationError(f"{role}: {exc.message}", hint=exc.hint) from exc


def _tracing(spec: AgentSpec, trace: bool, verbose: bool, console: Console) -> Any:
    """With --trace, or -v when observability is on: telemetry printing each case's
    span tree as it ends. None otherwise (the agent's own block decides)."""
    observed = spec.observability is not None and spec.observability.enabled
    if not trace and not (verbose and observed):
        return None

    telemetry = traced_in_terminal(spec)
    telemetry.watch_traces(tree_printer(lambda text: console.print(text, markup=False)))
    return telemetry
