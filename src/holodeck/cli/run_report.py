"""Where a finished run goes, whether `holodeck test` ran it or `holodeck test merge` put
it together from shards: saved under .holodeck/runs, shown on the console, written to
`-o`; and the exit code it earns."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from holodeck.errors import (
    EXIT_EXECUTION,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TEST_FAILED,
    ConfigurationError,
)
from holodeck.testing.phases import Phases
from holodeck.testing.reports import render_console, write_report
from holodeck.testing.results import TestRun
from holodeck.testing.run_store import save_run

RUNS_DIR = Path(".holodeck") / "runs"


class RunReport:
    """Where a finished (or interrupted) run goes: the console, .holodeck/runs, -o."""

    def __init__(
        self,
        console: Console,
        output: Path | None,
        fmt: str | None,
        verbose: bool,
        phases: Phases,
    ) -> None:
        self.console, self.output, self.fmt, self.verbose = console, output, fmt, verbose
        self.phases = phases

    def write(self, run: TestRun) -> int:
        """Save and report `run`; returns the exit code."""

        with self.phases.phase("save"):
            saved = save_run(run, RUNS_DIR)
        if run.interrupted:
            click.echo("Interrupted: reporting the cases that finished.", err=True)
        with self.phases.phase("report"):
            render_console(run, self.console, verbose=self.verbose)
        self.console.print(f"[dim]saved {saved}[/dim]")
        if self.output is not None:
            try:
                with self.phases.phase("report"):
                    written = write_report(run, self.output, self.fmt)
            except OSError as exc:  # the run itself is saved above; only the report is missing
                raise ConfigurationError(
                    f"cannot write the report {self.output}: {exc.strerror or exc}",
                    hint=f"the run is saved as {saved}; choose another -o path",
                ) from exc
            self.console.print(f"report: {written}")
        if run.interrupted:
            return EXIT_INTERRUPTED
        if run.summary.errors:
            return EXIT_EXECUTION
        return EXIT_TEST_FAILED if run.summary.failed else EXIT_OK
