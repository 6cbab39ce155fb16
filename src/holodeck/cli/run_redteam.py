"""`holodeck redteam`'s scan: load the agent, make the attacks, run and grade them, then
report and save what got through. Imported by the command (`cli/redteam.py`) once its
options are read, so that `holodeck redteam --help` loads none of the runtime."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

import click
from rich.console import Console

from holodeck.config.loader import load_agent
from holodeck.errors import EXIT_EXECUTION, EXIT_OK, EXIT_TEST_FAILED
from holodeck.runtime import Cassette, RunOptions
from holodeck.testing.redteam import failures
from holodeck.testing.redteam.attacks import build_attacks, choose_plugins, targets
from holodeck.testing.redteam.scan import ScanOptions, run_scan
from holodeck.testing.redteam.scan_reports import print_summary, write_report


def run(
    console: Console,
    *,
    path: Path,
    plugins: tuple[str, ...],
    seed: int,
    canaries: tuple[str, ...],
    model: str | None,
    harness: Literal["none"] | None,
    record: Path | None,
    replay: Path | None,
    outputs: tuple[Path, ...],
    save_failures: Path | None,
    concurrency: int,
    verbose: bool,
    strict: bool,
) -> int:
    """Scan the agent at `path`; returns the exit code."""
    chosen = choose_plugins(plugins)
    spec = load_agent(path, strict=strict)
    for warning in spec.warnings:
        click.echo(warning.render(), err=True)
    cassette = Cassette.from_settings(
        spec.execution, spec.root, None, record_path=record, replay_path=replay
    )
    aim = targets(spec, canaries)
    attacks = build_attacks(chosen, aim, seed)
    options = ScanOptions(
        run=RunOptions(model=model, harness=harness, cassette=cassette),
        concurrency=concurrency,
        seed=seed,
    )
    scan = asyncio.run(run_scan(spec, attacks, aim, options))
    print_summary(scan, console, verbose=verbose)
    for output in outputs:
        write_report(scan, output)
        console.print(f"Report written to {output}")
    if save_failures is not None:
        written, left = failures.save_failures(
            save_failures, attacks, scan.attacks, aim.instructions
        )
        console.print(
            f"{written} failed attack{'s' if written != 1 else ''} saved as test cases in "
            f"{save_failures}"
            + (f"; {left} relied on seeded tool results and were not saved" if left else "")
        )
    if scan.failed:
        return EXIT_TEST_FAILED
    return EXIT_EXECUTION if scan.errors else EXIT_OK
