"""`holodeck test [PATH] --compare A B`: two saved runs of one agent, compared. `latest`
and `previous` are that agent's test runs (PATH's, or, when PATH is left out and the
working directory holds no agent, the agent of the newest test run), never another
agent's run or an optimizer candidate saved in the same directory."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from holodeck.cli.run_report import RUNS_DIR
from holodeck.config.loader import load_agent
from holodeck.errors import EXIT_OK, EXIT_TEST_FAILED
from holodeck.spec.diagnostics import SpecError
from holodeck.testing.comparison import compare_runs
from holodeck.testing.reports.comparison import render_comparison
from holodeck.testing.run_store import ALIASES, load_run

DEFINITIONS = ("agent.yaml", "config.yaml")


def compare(refs: tuple[str, str], path: Path, console: Console) -> int:
    """Compare the runs `refs` name; exit 1 when the second has regressions."""
    agent = _agent(path) if any(ref in ALIASES for ref in refs) else None
    first, second = (load_run(ref, RUNS_DIR, agent) for ref in refs)
    comparison = compare_runs(first, second)
    render_comparison(comparison, console)
    return EXIT_TEST_FAILED if comparison.regressions else EXIT_OK


def _agent(path: Path) -> Path | None:
    """The definition file runs of PATH record as their source; None when PATH is the
    default (the working directory) and it holds no agent."""
    if path != Path():
        return load_agent(path).source
    if not any((path / name).is_file() for name in DEFINITIONS):
        return None
    try:
        return load_agent(path).source
    except SpecError:  # a project's settings config.yaml, not an agent image
        return None
