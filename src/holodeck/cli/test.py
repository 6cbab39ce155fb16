"""`holodeck test`: the command and its options; the run is `cli/run_tests.py`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console

from holodeck.cli import collector
from holodeck.cli.run_options import matrix_run_options, report_options
from holodeck.errors import ConfigurationError
from holodeck.testing.phases import Phases
from holodeck.testing.shards import Shard


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> Shard | None:
    if value is None:
        return None
    try:
        return Shard.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def check_pairs(
    ctx: click.Context,
    compare: tuple[str, str] | None,
    record: Path | None,
    replay: Path | None,
    output: Path | None,
) -> None:
    """Refuse options that cannot go together, before anything is loaded."""
    if record is not None and replay is not None:
        raise ConfigurationError(
            "--record and --replay were both given",
            hint="record once with --record FILE (a real model answers), then run with "
            "--replay FILE (offline); not both in one run",
        )
    if record is not None and output is not None and record.resolve() == output.resolve():
        raise ConfigurationError(
            f"-o and --record both name {output}",
            hint="the report and the cassette are two files: give them two names",
        )
    if compare is None:
        return
    # --compare reads two saved runs (of PATH's agent) and exits: an option of a run
    # would be ignored
    ignored = [
        param.opts[-1]
        for param in ctx.command.params
        if param.name not in ("compare", "path")
        and ctx.get_parameter_source(param.name or "") is ParameterSource.COMMANDLINE
    ]
    if ignored:
        raise ConfigurationError(
            f"--compare does not run the agent: {', '.join(ignored)} would be ignored",
            hint="run first (`holodeck test PATH ...` with those options), then compare "
            "with `holodeck test PATH --compare previous latest` alone",
        )


@click.command()
@click.argument("path", type=click.Path(path_type=Path), default=Path())
@click.option("--case", "names", multiple=True, help="Run only this case (repeatable).")
@click.option(
    "-k",
    "keyword",
    help="Run only cases whose name or input (or simulated user's goal) contains this text.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=None,
    help="Cases run at once.  [default: execution.parallel_test_cases, 8]",
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
@click.option(
    "--shard",
    callback=_shard,
    metavar="I/N",
    help="Run slice I of N (1 <= I <= N) of the selected cases; merge the runs with "
    "`holodeck test merge`.",
)
@click.option(
    "--tag",
    "tags",
    multiple=True,
    metavar="TEXT",
    help="Label the saved run (repeatable), e.g. --tag nightly --tag pr-123.",
)
@matrix_run_options
@report_options
@click.option(
    "--compare",
    nargs=2,
    metavar="RUN_A RUN_B",
    help="Compare two saved runs (ids, paths, or `latest` and `previous`: PATH's own "
    "test runs) and exit.",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="Show conversations, full tool results and judge prompts."
)
@click.option(
    "--trace",
    is_flag=True,
    help="Print each case's span tree (traced in memory when observability is off).",
)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option(
    "--timings",
    is_flag=True,
    help="Say how long importing, loading, running, saving and reporting took (on stderr).",
)
def test(
    compare: tuple[str, str] | None,
    record: Path | None,
    replay: Path | None,
    **options: Any,
) -> None:
    """Run the test cases of an agent (agent.yaml, image directory or .tar.gz).

    Each case runs in its own conversation; its tool calls are checked against
    `expected_tools` and its answer is scored by the configured metrics. Every run
    is saved under .holodeck/runs/ for `--compare`.

    Subcommands, each with its own --help: `holodeck test merge RUN...` combines
    the runs of a sharded suite (--shard I/N on several machines) into one run and
    report; `holodeck test view [PATH]` serves a local page of the saved runs;
    `holodeck test optimize PATH` searches what its `optimizer:` block names;
    `holodeck test capture` makes a test case of a conversation (a chat, a served
    session, a saved run's case, or turns sampled from a request log).

    Exit codes: 0 all passed, 1 a test failed (or `--compare` found a regression),
    2 invalid definition or options, or a model without its API key (refused before
    any case runs), 3 execution error (e.g. the model could not be reached), 130
    interrupted (a partial report is still written).

    \b
    Examples:
      holodeck test agent.yaml
      holodeck test examples/weather --model test -o report.html
      holodeck test my-image --case refund-policy --repeat 5
      holodeck test . --model openai/gpt-4o-mini --model anthropic/claude-haiku-4-5
      holodeck test . --record cassettes/ci.yaml      # then, in CI:
      holodeck test . --replay cassettes/ci.yaml -o junit.xml
      holodeck test --compare previous latest
      holodeck test . --model test --shard 2/4 --tag ci   # one slice of four, then:
      holodeck test merge shard-runs/ -o report.html
    """

    check_pairs(click.get_current_context(), compare, record, replay, options["output"])

    console = Console(stderr=False, highlight=False)
    if compare is not None:  # two saved runs read: none of the run's modules
        from holodeck.cli import run_compare

        raise SystemExit(run_compare.compare(compare, options["path"], console))
    collector.pause_for_start_up()  # until the agent is built (cli/collector.py)
    try:
        phases = Phases()
        with phases.phase("import"):
            # the run's modules (pydantic-ai, the metrics, the reports), loaded here so
            # that `holodeck test --help` needs none of them; and what the run imports on
            # first use otherwise, so that its first cases wait for nothing the rest do
            # not: anyio's asyncio backend (pydantic-ai runs every turn in anyio task
            # groups); bench/test_scale.py's run/ideal shows it
            import anyio._backends._asyncio  # noqa: F401

            from holodeck.cli import run_tests

        request = run_tests.command_request(record, replay, **options)
        raise SystemExit(run_tests.run(request, console, phases))
    finally:
        collector.resume()
