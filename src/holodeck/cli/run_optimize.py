"""`holodeck test optimize`'s run: load the agent, search, write and summarise. Imported
by the command (`cli/test_optimize.py`) once its options are read, so that its `--help`
loads none of pydantic-ai or the metrics."""

from __future__ import annotations

import asyncio
import sys
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

import holodeck.testing.metrics  # noqa: F401  (the judges, loaded before the first run)
from holodeck.cli.run_report import RUNS_DIR
from holodeck.config.loader import load_agent
from holodeck.errors import EXIT_EXECUTION, EXIT_OK, ConfigurationError, HoloDeckError
from holodeck.runtime import RunOptions
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.optimizer import Budget, OptimizerSettings
from holodeck.testing.optimizer import Search, SearchOutcome, Written, write_result
from holodeck.testing.optimizer.progress import Emit, live, ndjson
from holodeck.testing.runner import TestOptions

ARCHIVES = (".tar.gz", ".tgz")


def run(
    path: Path,
    progress: str | None,
    strict: bool,
    model: str | None,
    given: dict[str, Any],
    stderr: Console,
    summary: Console,
) -> int:
    """Search, write the best result beside the original, print what changed."""
    if path.is_file() and path.name.endswith(ARCHIVES):
        raise ConfigurationError(
            f"{path}: an optimized image is written into the image directory",
            hint=f"unpack it first (mkdir img && tar -xzf {path} -C img), then optimize img",
        )
    spec = load_agent(path, strict=strict)
    for warning in spec.warnings:
        click.echo(warning.render(), err=True)
    settings = _settings(spec, given)
    if not spec.test_cases:
        raise ConfigurationError(
            f"{path}: no test cases to score candidates with",
            hint="add `test_cases:` to agent.yaml, or tests/*.yaml to an image",
        )
    options = TestOptions(run=RunOptions(model=model))
    shown: AbstractContextManager[Emit] = (
        nullcontext(ndjson(sys.stdout)) if progress == "ndjson" else live(stderr)
    )
    with shown as emit:
        search = Search(spec, settings, options, RUNS_DIR, emit)
        result = asyncio.run(search.run())
    written = write_result(spec, result)
    _summarise(result, written, summary)
    if result.no_proposal is not None:
        click.echo(
            HoloDeckError(
                f"{result.no_proposal}; the instructions were not searched",
                hint="check `optimizer.proposer` (its model, endpoint and key): it must "
                "answer through a tool call, as judges do",
            ).render(),
            err=True,
        )
        return EXIT_EXECUTION
    return EXIT_OK


def _settings(spec: AgentSpec, given: dict[str, Any]) -> OptimizerSettings:
    """The `optimizer:` block with the command line's budgets, split and seed over it."""
    if spec.optimizer is None:
        raise ConfigurationError(
            f"{spec.source}: no `optimizer:` block says what to search",
            hint="add e.g. `optimizer: {axes: {numeric: [{path: temperature, range: [0, 1]}], "
            "textual: [{path: instructions}]}}` (see docs/testing.md, The optimizer)",
        )
    settings = spec.optimizer
    budget = {
        name: given[f"budget_{name}"]
        for name in ("candidates", "calls", "cost")
        if given.get(f"budget_{name}") is not None
    }
    update: dict[str, Any] = {}
    if budget:
        update["budget"] = Budget.model_validate({**settings.budget.model_dump(), **budget})
    for name in ("holdout", "seed"):
        if given.get(name) is not None:
            update[name] = given[name]
    return settings.model_copy(update=update)


def _summarise(result: SearchOutcome, written: list[Written], console: Console) -> None:
    table = Table(title=f"search {result.search_id}", title_justify="left")
    table.add_column("")
    table.add_column(f"train ({len(result.train)})", justify="right")
    table.add_column(f"holdout ({len(result.holdout)})", justify="right")
    for label, candidate in (("before", result.baseline), ("after", result.best)):
        held = "-" if candidate.holdout is None else f"{candidate.holdout:.3f}"
        table.add_row(label, f"{candidate.train:.3f}", held)
    console.print(table)
    cost = "unknown" if result.cost is None else f"${result.cost:.6f}"
    console.print(
        f"{len(result.candidates)} candidates, {result.calls} model calls, cost {cost}; "
        f"stopped: {result.stopped}. Runs are tagged optimize:{result.search_id} in {RUNS_DIR}."
    )
    if not written:
        console.print("No candidate beat the original: nothing written.")
        return
    for item in written:
        console.print(f"\nwrote {item.path}")
        console.print(escape(item.diff.rstrip("\n")), highlight=False, markup=False)
