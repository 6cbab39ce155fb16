"""`holodeck test PATH --model A --model B`: every case on each model, in one run.

Each model's cases run as `holodeck test --model M` would run them (its own agent, its
own `--concurrency` slots), all models side by side; `--rate-limit N` holds per provider,
so one provider's limit never slows another's cases. The runs become one saved run
(`testing/matrix.py`) whose reports put the models side by side."""

from __future__ import annotations

import asyncio
import signal
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import click

from holodeck.errors import EXIT_INTERRUPTED
from holodeck.runtime import RateLimiter, Run
from holodeck.testing.matrix import combine
from holodeck.testing.progress import live_progress
from holodeck.testing.run_details import RunDetails, describe
from holodeck.testing.runner import TestOptions, agent_for_tests, run_tests

if TYPE_CHECKING:
    from holodeck.cli.run_report import RunReport
    from holodeck.runtime import Agent
    from holodeck.spec.models.agent_spec import AgentSpec
    from holodeck.testing.results import TestRun


@dataclass(frozen=True)
class ModelRun:
    """One model's share of the run: its options, its agent, what its run records."""

    model: str
    options: TestOptions
    agent: Agent
    details: RunDetails


def model_runs(
    spec: AgentSpec, options: TestOptions, models: tuple[str, ...], tags: tuple[str, ...]
) -> list[ModelRun]:
    """An agent for each model; models of one provider share its rate limiter."""
    given = options.run.rate_limit
    limiters: dict[str, RateLimiter] = {}
    runs = []
    for model in models:
        limiter = None
        if given is not None:
            provider = model.partition("/")[0]
            limiter = limiters.setdefault(provider, RateLimiter(given.per_minute))
        own = replace(options, run=replace(options.run, model=model, rate_limit=limiter))
        agent = agent_for_tests(spec, own)
        runs.append(ModelRun(model, own, agent, describe(spec, agent.options, tags)))
    return runs


def run_matrix(spec: AgentSpec, runs: list[ModelRun], report: RunReport, total: int) -> int:
    """Run the suite on every model at once; save and report it as one run."""
    return asyncio.run(_matrix(spec, runs, report, total))


async def _matrix(spec: AgentSpec, runs: list[ModelRun], report: RunReport, total: int) -> int:
    loop = asyncio.get_running_loop()
    clock = time.perf_counter()
    async with AsyncExitStack() as stack:
        for each in runs:
            await stack.enter_async_context(Run(each.agent))
        tasks = [asyncio.create_task(run_tests(spec, r.options, r.agent)) for r in runs]

        def interrupt() -> None:  # each model's run stops and returns what finished
            for task in tasks:
                task.cancel()

        loop.add_signal_handler(signal.SIGINT, interrupt)
        try:
            with live_progress(report.console, total * len(runs), verbose=report.verbose) as seen:
                for each in runs:
                    each.options.on_case = seen
                with report.phases.phase("run"):
                    done = await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        finished: list[tuple[str, TestRun]] = []
        for each, outcome in zip(runs, done, strict=True):
            if isinstance(outcome, asyncio.CancelledError):
                continue  # interrupted before any of its cases ran
            if isinstance(outcome, BaseException):
                raise outcome
            finished.append((each.model, each.details.apply(outcome)))
        if not finished:
            click.echo("Interrupted before any case ran.", err=True)
            return EXIT_INTERRUPTED
        run = combine(finished, (time.perf_counter() - clock) * 1000)
        return report.write(run)
