"""`holodeck test optimize`: search the settings an agent's `optimizer:` block names,
scoring each candidate with the agent's own test cases; the best result is written
beside the original (`agent.optimized.yaml`, `<instructions>.optimized.md`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from holodeck.cli.run_options import model_option


@click.command()
@click.argument("path", type=click.Path(path_type=Path), default=Path())
@click.option(
    "--budget-candidates",
    type=click.IntRange(1),
    metavar="N",
    help="Test runs at most, the original's included.  [default: optimizer.budget.candidates]",
)
@click.option(
    "--budget-calls",
    type=click.IntRange(1),
    metavar="N",
    help="Model requests at most: the agent's, the judges' and the proposer's.",
)
@click.option(
    "--budget-cost",
    type=click.FloatRange(0, min_open=True),
    metavar="USD",
    help="Spend at most this much (priced from pydantic-ai's bundled price list).",
)
@click.option(
    "--holdout",
    type=click.FloatRange(0, 1, max_open=True),
    metavar="FRACTION",
    help="Share of the cases held out to judge new instructions.  [default: 0.3]",
)
@click.option("--seed", type=int, help="Seed of the train/holdout split.  [default: 42]")
@model_option
@click.option(
    "--progress",
    type=click.Choice(["ndjson"]),
    help="ndjson: one JSON event per line on stdout (start, candidates, proposals, "
    "accepted/rejected, budget reached, done) instead of live progress on stderr.",
)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
def optimize(
    path: Path, progress: str | None, strict: bool, model: str | None, **given: Any
) -> None:
    """Improve an agent against its own test cases.

    Searches what the `optimizer:` block of agent.yaml (or an image's config.yaml)
    names: numeric settings (temperature, top_p, max_tokens, search tools' top_k and
    min_similarity_score) by coordinate descent on the train cases, and the instructions
    by a proposer model, kept only when the held-out cases improve. Every candidate is a
    saved run under .holodeck/runs/ tagged `optimize:<search id>`. The original is never
    changed: the best result goes to agent.optimized.yaml (or <file>.optimized.md and
    config.optimized.yaml), and a diff and the before/after scores are printed.

    Exit codes: 0 done (improved or not), 2 invalid definition or options, 3 execution
    error, or the proposer gave no proposal at all (what improved is still written).

    \b
    Examples:
      holodeck test optimize agent.yaml
      holodeck test optimize . --budget-candidates 10 --budget-calls 400
      holodeck test optimize my-image --model openai/gpt-4o-mini --progress ndjson
    """
    from holodeck.cli import run_optimize

    # the summary goes to stdout, unless stdout carries the events
    summary = Console(stderr=progress == "ndjson", highlight=False)
    raise SystemExit(
        run_optimize.run(path, progress, strict, model, given, Console(stderr=True), summary)
    )
