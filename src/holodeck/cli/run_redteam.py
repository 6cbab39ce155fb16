"""`holodeck redteam`'s scan: load the agent, make the attacks, run and grade them, then
report and save what got through. Imported by the command (`cli/redteam.py`) once its
options are read, so that `holodeck redteam --help` loads none of the runtime."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

import click
from rich.console import Console
from rich.progress import Progress

from holodeck.config.loader import load_agent
from holodeck.errors import EXIT_EXECUTION, EXIT_OK, EXIT_TEST_FAILED, ConfigurationError
from holodeck.runtime import Cassette, RunOptions, override_settings
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.testing.offline import offline_model, offline_run
from holodeck.testing.redteam import failures
from holodeck.testing.redteam.attacks import (
    PLUGINS,
    SINGLE,
    Attack,
    Targets,
    build_attacks,
    choose_plugins,
    choose_strategies,
    targets,
)
from holodeck.testing.redteam.generated import attacker, generate
from holodeck.testing.redteam.results import Scan
from holodeck.testing.redteam.scan import ScanOptions, run_scan
from holodeck.testing.redteam.scan_reports import print_summary, write_report
from holodeck.testing.redteam.scan_store import SCANS_DIR, new_scan_id, save_scan


def run(
    console: Console,
    *,
    path: Path,
    plugins: tuple[str, ...],
    strategies: tuple[str, ...],
    seed: int,
    canaries: tuple[str, ...],
    model: str | None,
    harness: Literal["none"] | None,
    record: Path | None,
    replay: Path | None,
    outputs: tuple[Path, ...],
    save_failures: Path | None,
    concurrency: int,
    attacker_model: str | None,
    generated: int,
    verbose: bool,
    strict: bool,
) -> int:
    """Scan the agent at `path`; returns the exit code."""
    chosen = choose_plugins(plugins)
    ways = tuple(choose_strategies(strategies))
    spec = load_agent(path, strict=strict)
    for warning in spec.warnings:
        click.echo(warning.render(), err=True)
    cassette = Cassette.from_settings(
        spec.execution, spec.root, None, record_path=record, replay_path=replay
    )
    aim = targets(spec, canaries)
    attacks = build_attacks(chosen, aim, seed, ways)
    options = ScanOptions(
        run=RunOptions(model=model, harness=harness, cassette=cassette),
        concurrency=concurrency,
        seed=seed,
        strategies=ways,
    )
    if attacker_model is not None:
        _check_attacker(spec, options.run, attacker_model)
    scan = asyncio.run(_scan(spec, (chosen, attacks), aim, options, attacker_model, generated))
    scan.scan_id = new_scan_id()
    saved = save_scan(scan, SCANS_DIR)
    print_summary(scan, console, verbose=verbose)
    console.print(f"[dim]saved {saved} (holodeck test view shows it)[/dim]")
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


async def _scan(
    spec: AgentSpec,
    planned: tuple[list[str], list[Attack]],
    aim: Targets,
    options: ScanOptions,
    attacker_model: str | None,
    count: int,
) -> Scan:
    """Write the attacker's attacks (when one is named), then run them all: on one event
    loop, which the attacker's model client and the agent's share."""
    plugins, attacks = planned
    if attacker_model is not None:
        model = attacker(spec, attacker_model, options.run)
        options.attacker = model  # it also plays the user of multi-turn attacks
        if SINGLE in options.strategies:  # the attacks it writes are single messages
            written = await generate(model, spec, plugins, aim, count, options.seed)
            order = list(PLUGINS)
            attacks = sorted([*attacks, *written], key=lambda a: order.index(a.plugin))
    shown = Console(stderr=True)
    # a bar on a terminal only: a real model's scan takes minutes, a log needs no bar
    with Progress(console=shown, transient=True, disable=not shown.is_terminal) as bar:
        task = bar.add_task("attacks", total=len(attacks))
        options.on_attack = lambda _: bar.advance(task)
        return await run_scan(spec, attacks, aim, options)


def _check_attacker(spec: AgentSpec, run: RunOptions, attacker_model: str) -> None:
    """Generated attacks need a real model on both sides: the offline model would neither
    write attacks worth running nor answer them but by rote."""
    if offline_model(override_settings(attacker_model), RunOptions()):
        raise ConfigurationError(
            "--attacker-model test: the offline model cannot write attacks",
            hint="name a real model (`provider/name`), or leave --attacker-model out to run "
            "the static payloads",
        )
    if offline_run(spec, run):
        raise ConfigurationError(
            "--attacker-model: the agent answers with the offline `test` model, which runs "
            "the static payloads only",
            hint="scan with a real model for the agent (its own, or --model provider/name), "
            "or leave --attacker-model out",
        )
