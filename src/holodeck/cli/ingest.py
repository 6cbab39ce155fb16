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
from holodeck.runtime import Hosting, RunOptions, tool_context
from holodeck.search.tool_index import search_index
from holodeck.spec.models.tools import HierarchicalDocumentTool, VectorstoreTool

if TYPE_CHECKING:
    from holodeck.runtime import ToolContext
    from holodeck.spec.models.agent_spec import AgentSpec
    from holodeck.spec.models.tools import SearchTool


@click.command()
@click.argument("path", type=click.Path(path_type=Path), default=Path())
@click.option("--tool", "only", multiple=True, help="Only this search tool (repeatable).")
@click.option(
    "--rebuild",
    is_flag=True,
    help="Drop the tools' stored chunks and cached vectors first, and embed everything again.",
)
@model_option
def ingest(path: Path, only: tuple[str, ...], rebuild: bool, model: str | None) -> None:
    """Bring the agent's search tools (`vectorstore`, `hierarchical_document`) up to date
    with their sources, so the first question does not wait for it.

    Incremental: unchanged files are skipped, changed files re-embedded, deleted files
    dropped. Every problem found in the sources is listed. Vectors of another embedding
    model, or of the same model at another endpoint, are never mixed: the sources are
    embedded again, and a line says so.

    \b
    Examples:
      holodeck ingest
      holodeck ingest examples/research --tool search_papers
      holodeck ingest --rebuild
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
    options = tool_context(spec, RunOptions(model=model), Hosting(progress=bar))
    asyncio.run(_ingest_all(tools, spec, options, bar, rebuild=rebuild))


async def _ingest_all(
    tools: list[SearchTool], spec: AgentSpec, options: ToolContext, bar: IngestBar, *, rebuild: bool
) -> None:
    """Each tool in turn: its progress under the bar, then its lines once the bar is gone
    (printed under a live bar, they were glued to it and cut at the terminal's width)."""
    for tool in tools:
        index, missing = search_index(tool, spec, options)
        started = time.perf_counter()
        name = tool.name
        async with index:
            if rebuild:
                dropped = await index.rebuild()
                click.echo(f"{name}: dropped {dropped} stored files and their cached vectors")
            with bar.shown():
                report = await index.sync(partial(bar, name))
        seconds = time.perf_counter() - started
        how = index.producer or f"keywords ({missing})"
        for note in report.notes:
            click.echo(note)
        click.echo(
            f"{name}: {report.files} files, {len(report.changed)} changed, "
            f"{len(report.removed)} removed; {report.chunks_embedded} chunks embedded, "
            f"{report.chunks} stored; {how}; {seconds:.1f} s"
        )
        for issue in report.issues:
            click.secho(f"  warning: {issue.where}: {issue.message}", fg="yellow", err=True)
