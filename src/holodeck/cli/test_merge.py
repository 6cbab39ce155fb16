"""`holodeck test merge`: one run, and one report, from the runs of a sharded suite."""

from __future__ import annotations

import glob
from collections.abc import Iterable
from pathlib import Path

import click
from rich.console import Console

from holodeck.cli.run_options import report_options
from holodeck.cli.run_report import RUNS_DIR, RunReport
from holodeck.testing.merge import merge_runs
from holodeck.testing.phases import Phases
from holodeck.testing.results import TestRun
from holodeck.testing.run_store import RunLookupError, load_run

_GLOB = frozenset("*?[")


@click.command()
@click.argument("refs", metavar="RUN...", nargs=-1, required=True)
@report_options
@click.option(
    "--force",
    is_flag=True,
    help="Merge runs of different agents or prompt versions, or overlapping shards.",
)
@click.option("-v", "--verbose", is_flag=True, help="Show conversations and judge prompts.")
def merge(
    refs: tuple[str, ...], output: Path | None, fmt: str | None, force: bool, verbose: bool
) -> None:
    """Combine the runs of a sharded suite into one run, saved and reported like any.

    RUN is a saved run's id (or a unique prefix), `latest`, `previous`, a run file, a
    directory of run files (CI artifacts downloaded into a folder) or a glob
    ('shards/*.json'). Runs of different agents or prompt versions, shards of different
    splits and a case in two runs are refused unless --force; missing shards of a split
    are a warning.

    Exit codes: 0 all passed, 1 a case failed, 2 the runs cannot be merged or found,
    3 a case could not run.

    \b
    Examples:
      holodeck test merge shard-runs/ -o report.html
      holodeck test merge 'artifacts/*/*.json' -o junit.xml
      holodeck test merge 20250601-090000-a1b2c3 20250601-090412-d4e5f6
    """
    runs = _unique(run for ref in refs for run in _runs(ref))
    merged, warnings = merge_runs(runs, force=force)
    for warning in warnings:
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    click.echo(f"Merged {len(runs)} run{'s' if len(runs) != 1 else ''}.", err=True)
    console = Console(stderr=False, highlight=False)
    raise SystemExit(RunReport(console, output, fmt, verbose, Phases()).write(merged))


def _runs(ref: str) -> list[TestRun]:
    """The runs `ref` names: a directory's run files, a glob's, or one run."""
    path = Path(ref)
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise RunLookupError(
                f"{ref} holds no run files (*.json)",
                hint="point at the folder the shard runs were saved or downloaded to",
            )
        return [load_run(str(f), RUNS_DIR) for f in files]
    if _GLOB & set(ref):
        # absolute or relative, as a shell expands it (Path.glob takes no absolute pattern)
        matched = sorted(glob.glob(ref, recursive=True))  # noqa: PTH207
        files = [Path(m) for m in matched if Path(m).is_file()]
        if not files:
            raise RunLookupError(f"no run file matches {ref!r}")
        return [load_run(str(f), RUNS_DIR) for f in files]
    return [load_run(ref, RUNS_DIR)]


def _unique(runs: Iterable[TestRun]) -> list[TestRun]:
    """The same run named twice (by id and by a glob) counts once."""
    found: dict[str, TestRun] = {}
    for run in runs:
        found.setdefault(run.run_id, run)
    return list(found.values())
