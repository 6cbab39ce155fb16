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
    from holodeck.llm.tool_context import ToolContext
    from holodeck.spec.models.agent_spec import AgentSpec
    from holodeck.spec.models.tools import SearchTool


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
        options = tool_context(spec, RunOptions(model=model), Hosting(progress=bar))
        asyncio.run(_ingest_all(tools, spec, options))


async def _ingest_all(tools: list[SearchTool], spec: AgentSpec, options: ToolContext) -> None:

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
            click.secho(f"  warning: {issue.where}: {issue.message}", fg="yellow", err=True)
