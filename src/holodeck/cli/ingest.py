"""`holodeck ingest`: read, embed and store search tools' sources ahead of time."""

from __future__ import annotations

import asyncio
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click

from holodeck.cli.ingest_progress import IngestBar
from holodeck.cli.run_options import model_option
from holodeck.config.loader import load_agent
from holodeck.errors import ConfigurationError
from holodeck.llm.run_options import RunOptions
from holodeck.spec.tools import HierarchicalDocumentTool, VectorstoreTool
from holodeck.tools.search_index import search_index

if TYPE_CHECKING:
    from holodeck.llm.run_options import RunOptions
    from holodeck.spec.agent_spec import AgentSpec
    from holodeck.spec.tools import SearchTool


@click.command()
@click.argument("path", type=click.Path(path_type=Path), default=Path())
@click.option("--tool", "only", multiple=True, help="Only this search tool (repeatable).")
@model_option
def ingest(path: Path, only: tuple[str, ...], model: str | None) -> None:
    """Bring the agent's search tools (`vectorstore`, `hierarchical_document`) up to date
    with their sources, so the first question does not wait for it.

    Incremental: unchanged files are skipped, changed files re-embedded, deleted files
    dropped. Every problem found in the sources is listed.

    \b
    Examples:
      holodeck ingest
      holodeck ingest examples/research --tool search_papers
    """

    spec = load_agent(path)
    tools = [t for t in spec.tools if isinstance(t, VectorstoreTool | HierarchicalDocumentTool)]
    unknown = sorted(set(only) - {t.name for t in tools})
    if unknown:
        raise ConfigurationError(
            f"{spec.name} has no search tool {', '.join(f'`{u}`' for u in unknown)}",
            hint=f"its search tools: {', '.join(t.name for t in tools) or 'none'}",
        )
    if only:
        tools = [t for t in tools if t.name in only]
    if not tools:
        click.echo(f"{spec.name}: no search tools to ingest")
        return
    bar = IngestBar(always=True)
    with bar.shown():
        options = RunOptions(model=model, progress=bar).for_agent(spec)
        asyncio.run(_ingest_all(tools, spec, options))


async def _ingest_all(tools: list[SearchTool], spec: AgentSpec, options: RunOptions) -> None:

    for tool in tools:
        index, missing = search_index(tool, spec, options)
        started = time.perf_counter()
        name = tool.name
        progress = options.progress
        async with index:
            report = await index.sync(partial(progress, name) if progress else None)
        seconds = time.perf_counter() - started
        how = index.embedder.name if index.embedder is not None else f"keywords ({missing})"
        click.echo(
            f"{name}: {report.files} files, {len(report.changed)} changed, "
            f"{len(report.removed)} removed; {report.chunks_embedded} chunks embedded, "
            f"{report.chunks} stored; {how}; {seconds:.1f} s"
        )
        for issue in report.issues:
            where = issue.source + (
                f", record {issue.record_index}" if issue.record_index is not None else ""
            )
            click.secho(f"  warning: {where}: {issue.message}", fg="yellow", err=True)
