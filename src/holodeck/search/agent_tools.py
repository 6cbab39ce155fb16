"""Search tools (`vectorstore`, `hierarchical_document`) as the agent's tools, whatever
framework offers them to the model (the runtime wraps `SearchTools` in a toolset).

Each tool's index opens and catches up with its sources on `start()` or on first use,
and stays open until `aclose()`. An index that cannot be opened (a database that is
down) is reported once; its tool then answers with the error, and the agent goes on."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from holodeck.errors import ExecutionError, HoloDeckError
from holodeck.llm.tool_context import ToolContext
from holodeck.search.index import SearchIndex, SyncReport
from holodeck.search.tool_index import search_index
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.tools import SearchTool

log = logging.getLogger("holodeck.search")

MAX_ISSUES_SHOWN = 5
# A store that could not be opened (a database that is down) is tried again on a use at
# least this long after the failure: a long-running server recovers without a restart.
RETRY_AFTER_S = 30.0


class _Entry:
    """One tool's index and whether it is open."""

    def __init__(self, index: SearchIndex, missing: str | None) -> None:
        self.index = index
        self.missing = missing  # why there is no embedding model (keyword search)
        self.open = False
        self.failure: str | None = None
        self.failed_at = 0.0
        self.report: SyncReport | None = None
        self.lock = asyncio.Lock()


class SearchTools:
    """The agent's search tools; `start()` ingests every source, `aclose()` closes.

    tools = SearchTools([docs_tool], spec, context)  # docs_tool: a VectorstoreTool
    await tools.start()
    results = await tools.search("docs", "express delivery")
    """

    def __init__(self, tools: Sequence[SearchTool], spec: AgentSpec, options: ToolContext) -> None:
        self.tools = list(tools)
        self.retry_after_s = RETRY_AFTER_S  # these tools'; a caller may shorten it
        self._entries: dict[str, _Entry] = {}
        self._progress = options.progress
        for tool in tools:
            index, missing = search_index(tool, spec, options)
            self._entries[tool.name] = _Entry(index, missing)

    async def search(self, name: str, query: str) -> list[dict[str, Any]]:
        """Tool `name`'s results for `query`, as the model reads them; its index is opened
        first if need be (raises `ExecutionError` when it cannot be)."""
        entry = await self._ready(name)
        results = await entry.index.search(query)
        return [r.to_json() for r in results]

    def failures(self) -> dict[str, str]:
        """Each search tool whose index could not be opened or brought up to date (a source
        that is gone, a store that is down) -> why; it is tried again on a later use."""
        return {name: e.failure for name, e in self._entries.items() if e.failure is not None}

    async def start(self) -> None:
        """Open every index and bring it up to date with its sources, concurrently."""
        await asyncio.gather(*(self._open(name) for name in self._entries))

    async def aclose(self) -> None:
        for entry in self._entries.values():
            async with entry.lock:
                if entry.open:
                    entry.open = False
                    await entry.index.__aexit__(None, None, None)

    async def _ready(self, name: str) -> _Entry:
        entry = await self._open(name)
        if entry.failure is not None:
            raise ExecutionError(f"search tool `{name}` is unavailable: {entry.failure}")
        return entry

    async def _open(self, name: str) -> _Entry:
        entry = self._entries[name]
        async with entry.lock:
            if entry.open:
                return entry
            if entry.failure is not None:
                if time.monotonic() - entry.failed_at < self.retry_after_s:
                    return entry
                entry.failure = None
            if entry.missing is not None and entry.report is None:
                log.warning(
                    "search tool `%s`: no embedding model (%s); searching by keywords",
                    name,
                    entry.missing,
                )
            try:
                await entry.index.__aenter__()
                try:
                    entry.report = await entry.index.sync(self._reporter(name))
                except BaseException:
                    await entry.index.__aexit__(None, None, None)
                    raise
            except Exception as exc:  # a store that is down, a source that is gone: the
                # agent goes on without this tool, as with any tool that fails
                entry.failure = str(exc) if isinstance(exc, HoloDeckError) else repr(exc)
                entry.failed_at = time.monotonic()
                log.warning("search tool `%s` is unavailable: %s", name, entry.failure)
                return entry
            entry.open = True
            _report_issues(name, entry.report)
            return entry

    def _reporter(self, name: str) -> Any:
        progress = self._progress
        if progress is None:
            return None
        return lambda phase, done, total: progress(name, phase, done, total)


def _report_issues(name: str, report: SyncReport | None) -> None:
    if report is None:
        return
    for note in report.notes:
        log.warning("search tool %s", note)
    for issue in report.issues[:MAX_ISSUES_SHOWN]:
        log.warning("search tool `%s`: %s: %s", name, issue.where, issue.message)
    if len(report.issues) > MAX_ISSUES_SHOWN:
        log.warning(
            "search tool `%s`: %d more problems in its source (`holodeck ingest` lists all)",
            name,
            len(report.issues) - MAX_ISSUES_SHOWN,
        )
